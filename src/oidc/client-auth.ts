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

/** The one client-secret check: the presented secret against the stored SHA-256, in constant time. */
export function clientSecretMatches(secretHash: string | null, presented: string): boolean {
  if (!secretHash) return false;
  return safeEqual(sha256(presented), secretHash);
}

/** The interface's per-client limits of the client-authenticating endpoints. */
export type ClientLimitName = 'token' | 'revoke' | 'introspect' | 'deviceAuthorize';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The per-client limit a route spends in `authenticateClient`, once the client is known: client
     * limits key on the authenticated client, never on the client_id a request merely claims.
     */
    clientLimit?: ClientLimitName;
  }
}

/**
 * Spends the failure budgets of a request whose client authentication failed: per (claimed
 * client_id, network source) and per network source. Throws the 429 once either is spent; only
 * failing requests are ever refused by them.
 */
async function spendAuthFailure(
  ctx: AppContext,
  source: string,
  clientId: string | undefined,
): Promise<void> {
  await ctx.rateLimits.consume('clientAuthFailureSource', source);
  await ctx.rateLimits.consume('clientAuthFailure', `${clientId ?? ''}|${source}`);
}

async function verify(
  ctx: AppContext,
  creds: PresentedCredentials,
  opts: { idOnly?: boolean; confidentialOnly?: boolean },
): Promise<{ client: Client; proven: boolean }> {
  const client = await loadClient(ctx, creds.clientId);
  if (!client) throw invalidClient(creds.basic);
  const hasSecret = creds.secret !== undefined && creds.secret !== '';
  if (client.isConfidential) {
    if (hasSecret) {
      if (!clientSecretMatches(client.secretHash, creds.secret as string)) throw invalidClient(creds.basic);
      return { client, proven: true };
    }
    if (!opts.idOnly) throw invalidClient(creds.basic, 'this client must authenticate with its secret');
  } else if (hasSecret) {
    throw invalidClient(creds.basic, 'a public client has no secret');
  } else if (opts.confidentialOnly) {
    // Introspection (RFC 7662 §2.1): anyone can claim a public client's id, so it proves nothing.
    throw invalidClient(
      creds.basic,
      'only a confidential client authenticated with its secret may call this',
    );
  }
  return { client, proven: false };
}

/**
 * Authenticates the client of /oauth2/token, /revoke, /introspect and /device/authorize. A
 * confidential client must send its secret; a public client sends none. With `idOnly` (device
 * authorization and polling) a client id is enough, but a secret that is sent must be the right one.
 * An unknown client, a disabled app or a wrong secret: 401 `invalid_client` (with
 * `WWW-Authenticate: Basic` after Basic). With `confidentialOnly` (introspection) a public client is
 * refused the same way.
 *
 * Rate limits (the route's `clientLimit`), after authentication: a client that proved its secret
 * spends its own budget (per client_id, as the interface says); a client known only by its id (a
 * public client, or the device flow without a secret) spends a budget per (client_id, network
 * source), since anyone can claim the id. A failed authentication spends only the failure budgets
 * (per (client_id, source) and per source), so strangers cannot spend a client's budget and the right
 * secret is never refused because of someone else's failures.
 */
export async function authenticateClient(
  ctx: AppContext,
  req: FastifyRequest,
  body: ClientAuthFields,
  opts: { idOnly?: boolean; confidentialOnly?: boolean } = {},
): Promise<Client> {
  const limit = req.routeOptions.config.clientLimit;
  let creds: PresentedCredentials | undefined;
  let verified: { client: Client; proven: boolean };
  try {
    creds = presented(req, body);
    verified = await verify(ctx, creds, opts);
  } catch (err) {
    if (limit && err instanceof OAuthError && err.error === 'invalid_client')
      await spendAuthFailure(ctx, ctx.rateLimits.source(req), creds?.clientId);
    throw err;
  }
  const { client, proven } = verified;
  if (limit) {
    const key = proven
      ? `client:${client.clientId}`
      : `client:${client.clientId}|${ctx.rateLimits.source(req)}`;
    await ctx.rateLimits.consume(limit, key);
  }
  return client;
}
