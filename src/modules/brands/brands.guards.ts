import type { AppContext } from '../../context.js';
import { orgScope } from '../orgs/org-scope.js';

export interface OrgRouteOptions {
  /** Registers the `/admin/identity/organizations/...` mirror (system permissions, no membership). */
  admin?: boolean;
}

export function orgPrefix(opts: OrgRouteOptions): string {
  return `${opts.admin ? '/admin' : ''}/identity/organizations/:orgSlug`;
}

/**
 * The preHandlers of the brand, app, scope and connection routes: the org routes' own (`orgScope`):
 * authenticate, check the org permission (another org → 404, missing permission → 403), then spend
 * the org's read (60/min) or write (30/min) budget.
 */
export function orgRouteGuards(ctx: AppContext, opts: OrgRouteOptions) {
  const scope = orgScope(ctx, { admin: !!opts.admin });
  return { read: scope.read, write: scope.write };
}
