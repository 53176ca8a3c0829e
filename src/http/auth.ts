import type { FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../context.js';
import { invalidToken, unauthorized } from './errors.js';
import { enforceKeyScope, markAuthenticates } from './key-scopes.js';
import { documentGuard } from './route-doc.js';

/** User API keys start with this marker so a leaked key is recognisable (DESIGN.md §4). */
export const API_KEY_PREFIX = 'ghsk_';
/** The brand whose access tokens the REST API accepts (DESIGN.md §3). */
export const CONSOLE_AUDIENCE = 'console';

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i;

/**
 * The one reader of `Authorization: Bearer <token>` (RFC 6750 §2.1): the token; `undefined` when
 * the header is absent; `null` when it is there but not a Bearer credential. Callers pick the error.
 */
export function parseBearer(header: string | undefined): string | null | undefined {
  if (!header) return undefined;
  const m = BEARER.exec(header);
  return m ? m[1] : null;
}

function bearer(req: FastifyRequest): string | null {
  const token = parseBearer(req.headers.authorization);
  if (token === null) throw unauthorized('expected "Authorization: Bearer <token>"');
  return token ?? null;
}

/**
 * Verifies a console access token: RS256 by one of our keys, `typ` at+jwt, our issuer, `aud`
 * `console`, unexpired, for a live user, and passing every registered check (revocation, app state).
 */
export async function verifyConsoleToken(ctx: AppContext, token: string): Promise<Principal | null> {
  const claims = await ctx.verifyAccessToken(token, { audience: CONSOLE_AUDIENCE });
  if (!claims || !(await ctx.stores.accounts.isLive(claims.sub))) return null;
  return {
    kind: 'access_token',
    userId: claims.sub,
    scopes: typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [],
    clientId: claims.client_id,
    jti: claims.jti,
    exp: claims.exp,
  };
}

/** Whether the request presents an API key (well-formed or not: authentication then says which). */
function isApiKeyRequest(req: FastifyRequest): boolean {
  const h = req.headers.authorization;
  return typeof h === 'string' && h.replace(/^Bearer[ ]+/i, '').startsWith(API_KEY_PREFIX);
}

/**
 * preHandler for REST routes: no credentials → 401 `unauthorized`; bad credentials → 401
 * `invalid_token`; an API key the route's declared scope does not allow → 403 (src/http/key-scopes.ts;
 * a route that authenticates must declare what a key needs, or the app does not start).
 */
export function authenticate(ctx: AppContext) {
  async function authenticateRequest(req: FastifyRequest): Promise<void> {
    if (!req.principal) {
      const token = bearer(req);
      if (!token) throw unauthorized();
      let principal: Principal | null = null;
      if (token.startsWith(API_KEY_PREFIX)) {
        principal = ctx.hooks.apiKeyVerifier ? await ctx.hooks.apiKeyVerifier(token, req) : null;
      } else {
        principal = await verifyConsoleToken(ctx, token);
      }
      if (!principal) throw invalidToken();
      req.principal = principal;
    }
    enforceKeyScope(req);
  }
  return documentGuard(
    markAuthenticates(authenticateRequest, async (req) => {
      if (isApiKeyRequest(req)) await authenticateRequest(req);
    }),
    { kind: 'bearer' },
  );
}

/** The authenticated principal of a route that ran `authenticate`. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthorized();
  return req.principal;
}
