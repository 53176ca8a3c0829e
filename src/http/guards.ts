import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { AppContext } from '../context.js';
import { parseBearer, principalOf } from './auth.js';
import { forbidden } from './errors.js';
import { declareKeyScope } from './key-scopes.js';
import { type AdminPermission, apiKeyAllows } from './permissions.js';
import { documentGuard } from './route-doc.js';

/**
 * A user API key with scopes may use a `/users/*` route only when one of them allows it:
 * `users:read` for reads, `users:write` for changes, the admin permission for the lookups.
 * Access tokens (console audience) pass: the user is acting for themselves.
 */
export function requireKeyScope(scope: string) {
  return documentGuard(
    declareKeyScope(
      async function keyScopeGuard(req: FastifyRequest): Promise<void> {
        const p = principalOf(req);
        if (p.kind === 'api_key' && !apiKeyAllows(p.scopes, scope))
          throw forbidden(scope, 'the API key scopes do not allow this');
      },
      [scope],
    ),
    { kind: 'keyScope', scope },
  );
}

/**
 * Creating or revoking API keys, linking a wallet and deleting the account need a signed-in user's
 * access token: a leaked or narrowly scoped key must not be able to mint wider keys, add a sign-in
 * method (which signs in to the whole account) or destroy the account.
 */
export const requireAccessToken = documentGuard(
  declareKeyScope(async function requireAccessToken(req: FastifyRequest): Promise<void> {
    if (principalOf(req).kind !== 'access_token')
      throw forbidden('access_token', 'this needs an access token from a sign-in, not an API key');
  }, 'access-token-only'),
  { kind: 'accessTokenOnly' },
);

/** `auth_time` of the caller's access token (already verified by `authenticate`), if any. */
export function authTimeOf(req: FastifyRequest): number | undefined {
  if (principalOf(req).kind !== 'access_token') return undefined;
  const token = parseBearer(req.headers.authorization);
  if (!token) return undefined;
  const claims = decodeJwt(token);
  return typeof claims.auth_time === 'number' ? claims.auth_time : undefined;
}

export function requestMeta(req: FastifyRequest): { ip?: string; userAgent?: string } {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, ...(typeof ua === 'string' && ua ? { userAgent: ua } : {}) };
}

/** preHandler for system routes (`/admin/...`, user lookups). */
export function requireSystemPermission(ctx: AppContext, permission: AdminPermission) {
  const guard = async function systemPermissionGuard(req: FastifyRequest): Promise<void> {
    const principal = principalOf(req);
    if (!ctx.hooks.systemPermissions) throw new Error('ctx.hooks.systemPermissions is not wired');
    const sys = await ctx.hooks.systemPermissions(principal.userId);
    if (!sys.has(permission)) throw forbidden(permission);
    if (principal.kind === 'api_key' && !apiKeyAllows(principal.scopes, permission))
      throw forbidden(permission, 'the API key scopes do not allow this');
  };
  return documentGuard(declareKeyScope(guard, [permission]), { kind: 'systemPermission', permission });
}
