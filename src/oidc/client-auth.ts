import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { isSafeText } from '../http/input-rules.js';
import { safeEqual, sha256 } from '../lib/hash.js';
import { type Client, loadClient } from './clients.js';

/** The form fields client authentication reads. */
export interface ClientAuthFields {
  client_id?: string;
  client_secret?: string;
}

interface PresentedCredentials {
  clientId: string;
  secret?: string;
  basic: boolean;
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="gatehouse", charset="UTF-8"' };

function invalidClient(basic: boolean, description = 'client authentication failed'): OAuthError {
  return new OAuthError('invalid_client', description, 401, basic ? BASIC_CHALLENGE : undefined);
}

/** RFC 6749 §2.3.1: both parts of Basic credentials are form-urlencoded before base64. */
function formDecode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function parseBasic(header: string | undefined): { clientId: string; secret: string } | null | undefined {
  if (!header) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) {
    if (/^Basic\b/i.test(header)) return null;
    return undefined;
  }
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  // Header credentials follow the input rule that schemas apply to form fields.
  if (!clientId || secret === null || !isSafeText(clientId) || !isSafeText(secret)) return null;
  return { clientId, secret };
}

/**
 * The client id a request claims, without authenticating it: the rate-limit key, so guessing a
 * client's secret is limited per client id. Undefined when none is named.
 */
export function claimedClientId(req: FastifyRequest): string | undefined {
  const basic = parseBasic(req.headers.authorization);
  if (basic) return basic.clientId;
  const body = req.body as ClientAuthFields | undefined;
  return typeof body?.client_id === 'string' && body.client_id ? body.client_id : undefined;
}

/** Reads HTTP Basic or form credentials; both at once is `invalid_request`. */
function presented(req: FastifyRequest, body: ClientAuthFields): PresentedCredentials {
  const basic = parseBasic(req.headers.authorization);
  if (basic === null) throw invalidClient(true, 'malformed HTTP Basic credentials');
  if (basic) {
    if (body.client_secret !== undefined)
      throw new OAuthError('invalid_request', 'use HTTP Basic or client_secret in the body, not both');
    if (body.client_id !== undefined && body.client_id !== basic.clientId)
      throw new OAuthError('invalid_request', 'client_id in the body differs from HTTP Basic');
    return { clientId: basic.clientId, secret: basic.secret, basic: true };
  }
  if (!body.client_id) throw invalidClient(false, 'client authentication is required');
  return { clientId: body.client_id, secret: body.client_secret, basic: false };
}

function secretMatches(client: Client, secret: string): boolean {
  if (!client.secretHash) return false;
  return safeEqual(sha256(secret), client.secretHash);
}

/**
 * Authenticates the client of /oauth2/token, /revoke and /introspect. A confidential client must
 * send its secret; a public client sends none. With `idOnly` (device authorization and polling) a
 * client id is enough, but a secret that is sent must be the right one. An unknown client, a
 * disabled app or a wrong secret: 401 `invalid_client` (with `WWW-Authenticate: Basic` after Basic).
 */
export async function authenticateClient(
  ctx: AppContext,
  req: FastifyRequest,
  body: ClientAuthFields,
  opts: { idOnly?: boolean } = {},
): Promise<Client> {
  const creds = presented(req, body);
  const client = await loadClient(ctx, creds.clientId);
  if (!client) throw invalidClient(creds.basic);
  const hasSecret = creds.secret !== undefined && creds.secret !== '';
  if (client.isConfidential) {
    if (hasSecret) {
      if (!secretMatches(client, creds.secret as string)) throw invalidClient(creds.basic);
    } else if (!opts.idOnly) {
      throw invalidClient(creds.basic, 'this client must authenticate with its secret');
    }
  } else if (hasSecret) {
    throw invalidClient(creds.basic, 'a public client has no secret');
  }
  return client;
}
