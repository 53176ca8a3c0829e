import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { apiKeyAllows, type OrgPermission, orgGuards } from '../../http/permissions.js';
import type { Actor } from './roles.service.js';

/** Options of the org-scoped route plugins, registered once for members and once as the admin mirror. */
export interface OrgScopeOptions {
  /** The `/admin/identity/organizations` mirror: system permissions instead of membership. */
  admin: boolean;
}

/**
 * The preHandlers of an org-scoped route: authenticate, the permission (or, on the mirror, the
 * admin.orgs.view / admin.orgs.edit) check that also loads `req.org`, then the org's rate limit.
 * The limit runs after the check so that outsiders cannot spend an org's budget; the mirror counts
 * in its own bucket so operators do not spend the org's.
 */
export function orgScope(ctx: AppContext, opts: OrgScopeOptions) {
  const requirePermission = orgGuards(ctx, { admin: opts.admin });
  const orgKey = (req: FastifyRequest) => (opts.admin ? `admin:${req.org.id}` : req.org.id);
  const auth = authenticate(ctx);
  return {
    read: (permission: OrgPermission) => [
      auth,
      requirePermission(permission),
      ctx.rateLimits.guard('orgRead', orgKey),
    ],
    write: (permission: OrgPermission) => [
      auth,
      requirePermission(permission),
      ctx.rateLimits.guard('orgWrite', orgKey),
    ],
    auditRead: (permission: OrgPermission) => [
      auth,
      requirePermission(permission),
      ctx.rateLimits.guard('auditLogRead', orgKey),
    ],
    /**
     * The caller as the escalation checks see them. A scoped API key acts with the permissions its
     * scopes allow, so a narrow key cannot mint or hand out a role wider than itself.
     */
    actor: (req: FastifyRequest): Actor => {
      const principal = principalOf(req);
      let permissions = req.orgPermissions;
      if (principal.kind === 'api_key')
        permissions = new Set([...permissions].filter((p) => apiKeyAllows(principal.scopes, p)));
      return { userId: principal.userId, permissions, admin: opts.admin };
    },
  };
}
