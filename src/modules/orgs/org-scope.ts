import type { FastifyRequest, preHandlerAsyncHookHandler, preHandlerHookHandler } from 'fastify';
import type { RateLimitName } from '../../config/defaults.js';
import type { AppContext, Principal } from '../../context.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { type AdminPermission, apiKeyAllows, type OrgPermission } from '../../http/permissions.js';
import { orgGuards } from './org.guards.js';
import type { Actor } from './roles.service.js';

/** Options of the org-scoped route plugins, registered once for members and once as the admin mirror. */
export interface OrgScopeOptions {
  /** The `/admin/identity/organizations` mirror: system permissions instead of membership. */
  admin?: boolean;
}

/** The path prefix of an org's resources: `/identity/organizations/:orgSlug` or its admin mirror. */
export function orgPrefix(opts: OrgScopeOptions): string {
  return `${opts.admin ? '/admin' : ''}/identity/organizations/:orgSlug`;
}

/**
 * Whether the credential may use a system permission the user holds: always for an access token;
 * for an API key, only when its scopes allow it (a key with no scopes has the user's full access).
 */
export function credentialAllowsSystem(principal: Principal, permission: AdminPermission): boolean {
  return principal.kind !== 'api_key' || apiKeyAllows(principal.scopes, permission);
}

/**
 * The preHandlers of an org-scoped route (orgs, roles, members, audit log, brands, apps, scopes,
 * connections): authenticate, the permission (or, on the mirror, the admin.orgs.view /
 * admin.orgs.edit) check that also loads `req.org` (another org → 404, missing permission → 403),
 * then the org's rate limit. The limit runs after the check so that outsiders cannot spend an org's
 * budget; the mirror counts in its own bucket so operators do not spend the org's.
 */
export function orgScope(ctx: AppContext, opts: OrgScopeOptions = {}) {
  const requirePermission = orgGuards(ctx, { admin: !!opts.admin });
  /** The org's rate-limit key (after the permission check); the mirror's has its own bucket. */
  const orgKey = (req: FastifyRequest) => (opts.admin ? `admin:${req.org.id}` : req.org.id);
  const auth = authenticate(ctx);
  const limits = new Map<RateLimitName, preHandlerHookHandler | preHandlerAsyncHookHandler>();
  const limitOf = (name: RateLimitName) => {
    let guard = limits.get(name);
    if (!guard) {
      guard = ctx.rateLimits.guard(name, orgKey);
      limits.set(name, guard);
    }
    return guard;
  };
  /** authenticate, the permission check, then the org's `limit` budget. */
  const chain = (
    permission: OrgPermission,
    limit: RateLimitName,
  ): Array<preHandlerAsyncHookHandler | preHandlerHookHandler> => [
    auth,
    requirePermission(permission),
    limitOf(limit),
  ];
  return {
    orgKey,
    chain,
    read: (permission: OrgPermission) => chain(permission, 'orgRead'),
    write: (permission: OrgPermission) => chain(permission, 'orgWrite'),
    auditRead: (permission: OrgPermission) => chain(permission, 'auditLogRead'),
    /**
     * The caller as the escalation checks see them. A scoped API key acts with the permissions its
     * scopes allow, so a narrow key cannot mint or hand out a role wider than itself.
     */
    actor: (req: FastifyRequest): Actor => {
      const principal = principalOf(req);
      let permissions = req.orgPermissions;
      if (principal.kind === 'api_key')
        permissions = new Set([...permissions].filter((p) => apiKeyAllows(principal.scopes, p)));
      return { userId: principal.userId, permissions, admin: !!opts.admin };
    },
  };
}
