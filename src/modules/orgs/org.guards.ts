import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { OrgRow } from '../../db/schema.js';
import { principalOf } from '../../http/auth.js';
import { forbidden, notFound } from '../../http/errors.js';
import { declareKeyScope } from '../../http/key-scopes.js';
import { apiKeyAllows, ORG_PERMISSIONS, type OrgPermission } from '../../http/permissions.js';
import { documentGuard } from '../../http/route-doc.js';
import { findActiveOrgBySlug as findOrgBySlug, memberPermissionLists } from './orgs.queries.js';
import { systemPermissionsOf } from './system-permissions.queries.js';

export async function systemPermissions(ctx: AppContext, userId: string): Promise<Set<string>> {
  return new Set(await systemPermissionsOf(ctx.db, userId));
}

/** The caller's permissions in an org, read live on every request; null when not a member. */
export async function memberPermissions(
  ctx: AppContext,
  orgId: string,
  userId: string,
): Promise<Set<string> | null> {
  const rows = await memberPermissionLists(ctx.db, orgId, userId);
  if (rows.length === 0) return null;
  const perms = new Set<string>(['org.read']);
  for (const r of rows) for (const p of r ?? []) perms.add(p);
  return perms;
}

export async function findActiveOrgBySlug(ctx: AppContext, slug: string): Promise<OrgRow | undefined> {
  return findOrgBySlug(ctx.db, slug);
}

/**
 * Guards for org-scoped routes (`:orgSlug` in the path). On `/identity/organizations/...` the caller
 * must be a member (else 404: another org's resources are invisible) holding `permission` (else 403
 * with `details.missing`). On the admin mirror the caller needs `admin.orgs.view` for reads and
 * `admin.orgs.edit` for writes instead, and membership is not checked.
 * Also enforces API key scopes: a key may use a permission only if its scopes allow it.
 */
export function orgGuards(ctx: AppContext, opts: { admin?: boolean } = {}) {
  return function requirePermission(permission: OrgPermission) {
    const guard = async function orgPermissionGuard(req: FastifyRequest): Promise<void> {
      const principal = principalOf(req);
      const { orgSlug } = req.params as { orgSlug?: string };
      const org = orgSlug ? await findActiveOrgBySlug(ctx, orgSlug) : undefined;
      if (opts.admin) {
        const needed = req.method === 'GET' || req.method === 'HEAD' ? 'admin.orgs.view' : 'admin.orgs.edit';
        const sys = await systemPermissions(ctx, principal.userId);
        if (!sys.has(needed)) throw forbidden(needed);
        if (principal.kind === 'api_key' && !apiKeyAllows(principal.scopes, needed))
          throw forbidden(needed, 'the API key scopes do not allow this');
        if (!org) throw notFound('organization');
        req.org = org;
        req.orgPermissions = new Set(ORG_PERMISSIONS);
        return;
      }
      if (!org) throw notFound('organization');
      const perms = await memberPermissions(ctx, org.id, principal.userId);
      if (!perms) throw notFound('organization');
      if (!perms.has(permission)) throw forbidden(permission);
      if (principal.kind === 'api_key' && !apiKeyAllows(principal.scopes, permission))
        throw forbidden(permission, 'the API key scopes do not allow this');
      req.org = org;
      req.orgPermissions = perms;
    };
    return documentGuard(
      declareKeyScope(
        guard,
        opts.admin
          ? (method) => [method === 'GET' || method === 'HEAD' ? 'admin.orgs.view' : 'admin.orgs.edit']
          : [permission],
      ),
      { kind: 'orgPermission', permission, admin: !!opts.admin },
    );
  };
}

/** The system-route guard lives in src/http/guards.ts (users' lookups use it too); kept here for importers. */
export { requireSystemPermission } from '../../http/guards.js';
