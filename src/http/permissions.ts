import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { OrgRow } from '../db/schema.js';
import { forbidden, notFound } from './errors.js';
import { principalOf } from './auth.js';
import { declareKeyScope, keyMeets } from './key-scopes.js';
import { documentGuard } from './route-doc.js';

/** Every org permission. `org.read` is implied by membership. */
export const ORG_PERMISSIONS = [
  'org.read',
  'org.edit',
  'org.delete',
  'org.ownership.transfer',
  'org.members.view',
  'org.members.edit',
  'org.brands.view',
  'org.brands.edit',
  'org.apps.view',
  'org.apps.edit',
  'org.connections.view',
  'org.connections.edit',
  'org.scopes.edit',
  'org.tokenGates.view',
  'org.tokenGates.edit',
  'org.webhooks.view',
  'org.webhooks.edit',
] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

/** System permissions, granted with `gatehouse admin grant`. */
export const ADMIN_PERMISSIONS = ['admin.orgs.view', 'admin.orgs.edit', 'admin.users.view'] as const;
export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];

/** The built-in roles, as data (DESIGN.md §4). */
export const BUILT_IN_ROLES: Record<
  'owner' | 'admin' | 'member',
  { name: string; permissions: OrgPermission[] }
> = {
  owner: { name: 'Owner', permissions: [...ORG_PERMISSIONS] },
  admin: {
    name: 'Admin',
    permissions: ORG_PERMISSIONS.filter((p) => p !== 'org.delete' && p !== 'org.ownership.transfer'),
  },
  member: {
    name: 'Member',
    permissions: ORG_PERMISSIONS.filter((p) => p === 'org.read' || p.endsWith('.view')),
  },
};

function pascalToDotted(name: string): string {
  return (
    name.charAt(0).toLowerCase() +
    name
      .slice(1)
      .replace(/(Edit|View|Delete|Transfer)$/, '.$1')
      .replace(/\.(\w)/, (_, c: string) => `.${c.toLowerCase()}`)
  );
}

/**
 * Accepts both forms: `org.members.view` and `IdentityOrgPermission.MembersView`;
 * `admin.orgs.view` and `AdminPermission.OrgsView`. Returns the dotted form or null.
 */
export function normalizePermission(name: string): string | null {
  if ((ORG_PERMISSIONS as readonly string[]).includes(name)) return name;
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(name)) return name;
  let m = /^IdentityOrgPermission\.([A-Z][A-Za-z]*)$/.exec(name);
  if (m) {
    const special: Record<string, string> = {
      Read: 'org.read',
      Edit: 'org.edit',
      Delete: 'org.delete',
      OwnershipTransfer: 'org.ownership.transfer',
    };
    const dotted = special[m[1]] ?? `org.${pascalToDotted(m[1])}`;
    return (ORG_PERMISSIONS as readonly string[]).includes(dotted) ? dotted : null;
  }
  m = /^AdminPermission\.([A-Z][A-Za-z]*)$/.exec(name);
  if (m) {
    const dotted = `admin.${pascalToDotted(m[1])}`;
    return (ADMIN_PERMISSIONS as readonly string[]).includes(dotted) ? dotted : null;
  }
  return null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The org of an org-scoped route, after the guard ran. */
    org: OrgRow;
    /** The caller's permissions in `org` (every permission on admin mirror routes). */
    orgPermissions: Set<string>;
  }
}

export async function systemPermissions(ctx: AppContext, userId: string): Promise<Set<string>> {
  const rows = await ctx.db
    .selectFrom('system_permissions')
    .select('permission')
    .where('user_id', '=', userId)
    .execute();
  return new Set(rows.map((r) => r.permission));
}

/** The caller's permissions in an org, read live on every request; null when not a member. */
export async function memberPermissions(
  ctx: AppContext,
  orgId: string,
  userId: string,
): Promise<Set<string> | null> {
  const rows = await ctx.db
    .selectFrom('org_members as m')
    .leftJoin('member_roles as mr', (j) =>
      j.onRef('mr.org_id', '=', 'm.org_id').onRef('mr.user_id', '=', 'm.user_id'),
    )
    .leftJoin('roles as r', 'r.id', 'mr.role_id')
    .select(['r.permissions'])
    .where('m.org_id', '=', orgId)
    .where('m.user_id', '=', userId)
    .where('m.disabled_at', 'is', null)
    .execute();
  if (rows.length === 0) return null;
  const perms = new Set<string>(['org.read']);
  for (const r of rows) for (const p of r.permissions ?? []) perms.add(p);
  return perms;
}

export async function findActiveOrgBySlug(ctx: AppContext, slug: string): Promise<OrgRow | undefined> {
  return ctx.db
    .selectFrom('orgs')
    .selectAll()
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
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

/** An API key with no scopes has the user's full access; otherwise one of its scopes must name the permission. */
export function apiKeyAllows(scopes: string[], permission: string): boolean {
  return keyMeets(scopes, [permission]);
}

/** preHandler for system routes (`/admin/...`, user lookups). */
export function requireSystemPermission(ctx: AppContext, permission: AdminPermission) {
  const guard = async function systemPermissionGuard(req: FastifyRequest): Promise<void> {
    const principal = principalOf(req);
    const sys = await systemPermissions(ctx, principal.userId);
    if (!sys.has(permission)) throw forbidden(permission);
    if (principal.kind === 'api_key' && !apiKeyAllows(principal.scopes, permission))
      throw forbidden(permission, 'the API key scopes do not allow this');
  };
  return documentGuard(declareKeyScope(guard, [permission]), { kind: 'systemPermission', permission });
}
