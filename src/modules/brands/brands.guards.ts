import type { preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.js';
import { authenticate } from '../../http/auth.js';
import { type OrgPermission, orgGuards } from '../../http/permissions.js';

export interface OrgRouteOptions {
  /** Registers the `/admin/identity/organizations/...` mirror (system permissions, no membership). */
  admin?: boolean;
}

export function orgPrefix(opts: OrgRouteOptions): string {
  return `${opts.admin ? '/admin' : ''}/identity/organizations/:orgSlug`;
}

/**
 * The preHandlers of the brand, app, scope and connection routes: authenticate, check the org
 * permission (another org → 404, missing permission → 403), then spend the org's read (60/min) or
 * write (30/min) budget. The limit runs after the guard so strangers cannot spend an org's budget.
 */
export function orgRouteGuards(ctx: AppContext, opts: OrgRouteOptions) {
  const requirePermission = orgGuards(ctx, { admin: opts.admin });
  const auth = authenticate(ctx);
  const readLimit = ctx.rateLimits.guard('orgRead', (req) => req.org?.id);
  const writeLimit = ctx.rateLimits.guard('orgWrite', (req) => req.org?.id);
  return {
    read: (permission: OrgPermission): preHandlerAsyncHookHandler[] => [
      auth,
      requirePermission(permission),
      readLimit,
    ],
    write: (permission: OrgPermission): preHandlerAsyncHookHandler[] => [
      auth,
      requirePermission(permission),
      writeLimit,
    ],
  };
}
