import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import { diff, recordMutation } from '../../events/outbox.js';
import { type FieldError, forbidden, notFound, unprocessable, validationFailed } from '../../http/errors.js';
import { normalizePermission, ORG_PERMISSIONS, type OrgPermission } from '../../http/permissions.js';
import { newId } from '../../lib/ids.js';
import * as q from './orgs.queries.js';
import type { RoleRow } from './orgs.queries.js';
import type { CreateRoleInput, RoleView, UpdateRoleInput } from './orgs.schemas.js';

/** Who is acting and what they may do in the org (every permission on the admin mirror). */
export interface Actor {
  userId: string;
  permissions: Set<string>;
  admin: boolean;
}

export function presentRole(r: RoleRow): RoleView {
  const v: RoleView = {
    id: r.id,
    name: r.name,
    isBuiltIn: r.built_in !== null,
    permissions: [...r.permissions],
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
  if (r.description !== null) v.description = r.description;
  return v;
}

/**
 * Org permissions in either form (`org.members.view`, `IdentityOrgPermission.MembersView`) → the
 * dotted form, deduplicated, in catalog order. Anything else (system permissions included) is a 400.
 */
export function normalizeOrgPermissions(input: string[], field = 'permissions'): OrgPermission[] {
  const errors: FieldError[] = [];
  const out = new Set<string>();
  input.forEach((raw, i) => {
    const p = normalizePermission(raw);
    if (!p || !(ORG_PERMISSIONS as readonly string[]).includes(p)) {
      errors.push({ field: `${field}.${i}`, code: 'invalid_value', message: 'not an org permission' });
    } else out.add(p);
  });
  if (errors.length) throw validationFailed(errors);
  return ORG_PERMISSIONS.filter((p) => out.has(p));
}

/** Nobody grants what they do not hold: 403 naming every permission the actor lacks. */
export function assertHolds(actor: Actor, permissions: Iterable<string>): void {
  const missing = [...new Set(permissions)].filter((p) => !actor.permissions.has(p));
  if (missing.length) throw forbidden(missing, 'you cannot grant or change a permission you do not hold');
}

function assertCustom(role: RoleRow): void {
  if (role.built_in !== null)
    throw unprocessable('built-in roles (Owner, Admin, Member) cannot be edited or deleted', {
      roleId: role.id,
    });
}

export async function listRoles(
  ctx: AppContext,
  orgId: string,
): Promise<{ items: RoleView[]; total: number }> {
  const rows = await q.listRoles(ctx.db, orgId);
  return { items: rows.map(presentRole), total: rows.length };
}

export async function createRole(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  input: CreateRoleInput,
): Promise<RoleView> {
  const permissions = normalizeOrgPermissions(input.permissions);
  assertHolds(actor, permissions);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const role = await q
      .insertRole(trx, {
        id: newId('role_'),
        org_id: orgId,
        name: input.name,
        description: input.description ?? null,
        built_in: null,
        permissions,
        created_at: now,
        updated_at: now,
      })
      .catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'role.created',
      resourceType: 'role',
      resourceId: role.id,
      metadata: { name: role.name, permissions },
    });
    return presentRole(role);
  });
}

export async function updateRole(
  ctx: AppContext,
  orgId: string,
  roleId: string,
  actor: Actor,
  input: UpdateRoleInput,
): Promise<RoleView> {
  const permissions = input.permissions ? normalizeOrgPermissions(input.permissions) : undefined;
  return ctx.db.transaction().execute(async (trx) => {
    const role = await q.findRole(trx, orgId, roleId, 'update');
    if (!role) throw notFound('role');
    assertCustom(role);
    // Editing a role means holding what it carries now and what it will carry.
    assertHolds(actor, [...role.permissions, ...(permissions ?? [])]);
    const patch: Parameters<typeof q.updateRole>[2] = { updated_at: ctx.clock.now() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (permissions) patch.permissions = permissions;
    const updated = await q.updateRole(trx, role.id, patch).catch(mapDbError);
    const changes = diff(
      { name: role.name, description: role.description, permissions: role.permissions },
      { name: updated.name, description: updated.description, permissions: updated.permissions },
      ['name', 'description', 'permissions'],
    );
    if (Object.keys(changes.after).length > 0) {
      await recordMutation(trx, ctx.clock, {
        orgId,
        actorUserId: actor.userId,
        action: 'role.updated',
        resourceType: 'role',
        resourceId: role.id,
        metadata: changes,
      });
    }
    return presentRole(updated);
  });
}

export async function deleteRole(
  ctx: AppContext,
  orgId: string,
  roleId: string,
  actor: Actor,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const role = await q.findRole(trx, orgId, roleId, 'update');
    if (!role) throw notFound('role');
    assertCustom(role);
    assertHolds(actor, role.permissions);
    await q.deleteRole(trx, role.id).catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'role.deleted',
      resourceType: 'role',
      resourceId: role.id,
      metadata: { name: role.name, permissions: role.permissions },
    });
  });
}
