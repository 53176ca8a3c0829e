import type { FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../context.js';
import { verifyJwt } from '../oidc/jwt.js';
import { invalidToken, unauthorized } from './errors.js';
import { documentGuard } from './route-doc.js';

/** User API keys start with this marker so a leaked key is recognisable (DESIGN.md §4). */
export const API_KEY_PREFIX = 'ghsk_';
/** The brand whose access tokens the REST API accepts (DESIGN.md §3). */
export const CONSOLE_AUDIENCE = 'console';

function bearer(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(h);
  if (!m) throw unauthorized('expected "Authorization: Bearer <token>"');
  return m[1];
}

/**
 * Verifies a console access token: RS256 by one of our keys, `typ` at+jwt, our issuer, `aud`
 * `console`, unexpired, for a live user, and passing every registered check (revocation, app state).
 */
export async function verifyConsoleToken(ctx: AppContext, token: string): Promise<Principal | null> {
  const claims = await verifyJwt(ctx.keys, ctx.clock, token, {
    issuer: ctx.config.issuer,
    audience: CONSOLE_AUDIENCE,
    typ: 'at+jwt',
  });
  if (!claims || typeof claims.sub !== 'string' || typeof claims.client_id !== 'string') return null;
  for (const check of ctx.hooks.accessTokenChecks) {
    if (!(await check(claims))) return null;
  }
  const user = await ctx.db
    .selectFrom('users')
    .select(['id'])
    .where('id', '=', claims.sub)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!user) return null;
  return {
    kind: 'access_token',
    userId: claims.sub,
    scopes: typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [],
    clientId: claims.client_id,
    jti: typeof claims.jti === 'string' ? claims.jti : undefined,
    exp: claims.exp,
  };
}

/** preHandler for REST routes: no credentials → 401 `unauthorized`; bad credentials → 401 `invalid_token`. */
export function authenticate(ctx: AppContext) {
  return documentGuard(
    async function authenticateRequest(req: FastifyRequest): Promise<void> {
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
    },
    { kind: 'bearer' },
  );
}

/** The authenticated principal of a route that ran `authenticate`. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthorized();
  return req.principal;
}
