import { type Selectable, sql } from 'kysely';
import type { Executor, OrgRow, RolesTable, UserRow } from '../../db/schema.js';

export type RoleRow = Selectable<RolesTable>;

// ---------------------------------------------------------------- orgs

/** Frees `slug` if the org that held it was deleted at or before `cutoff` (its reservation is over). */
export async function releaseExpiredSlugClaim(db: Executor, slug: string, cutoff: Date): Promise<void> {
  await db
    .updateTable('orgs')
    .set({ slug_claim: null })
    .where('slug_claim', '=', slug)
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<=', cutoff)
    .execute();
}

export async function insertOrg(db: Executor, row: OrgRow): Promise<OrgRow> {
  return db.insertInto('orgs').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The org (live, or deleted with its slug still reserved) whose `slug_claim` is `slug`. */
export function slugClaimHolder(db: Executor, slug: string) {
  return db.selectFrom('orgs').select('deleted_at').where('slug_claim', '=', slug).executeTakeFirst();
}

/** The active org holding `slug`. */
export async function findActiveOrgBySlug(db: Executor, slug: string): Promise<OrgRow | undefined> {
  return db
    .selectFrom('orgs')
    .selectAll()
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Inserts the org unless its id exists; true when this call inserted it (start-up bootstrap). */
export async function insertOrgIfAbsent(db: Executor, row: OrgRow): Promise<boolean> {
  const inserted = await db
    .insertInto('orgs')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!inserted;
}

/** Locks the org row for the rest of the transaction: serializes ownership and membership changes. */
export async function lockActiveOrg(db: Executor, id: string): Promise<OrgRow | undefined> {
  return db
    .selectFrom('orgs')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/** Active orgs, newest first: all of them, or those `userId` is an active member of. */
export async function listOrgs(
  db: Executor,
  opts: { memberUserId?: string; limit: number; offset: number },
): Promise<{ rows: OrgRow[]; total: number }> {
  let base = db.selectFrom('orgs as o').where('o.deleted_at', 'is', null);
  if (opts.memberUserId) {
    const userId = opts.memberUserId;
    base = base.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('org_members as m')
          .select(sql`1`.as('one'))
          .whereRef('m.org_id', '=', 'o.id')
          .where('m.user_id', '=', userId)
          .where('m.disabled_at', 'is', null),
      ),
    );
  }
  const [rows, count] = await Promise.all([
    base
      .selectAll('o')
      .orderBy('o.created_at', 'desc')
      .orderBy('o.id', 'desc')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export async function updateOrg(
  db: Executor,
  id: string,
  patch: Partial<Pick<OrgRow, 'name' | 'description' | 'icon_file_id' | 'updated_at'>>,
): Promise<OrgRow> {
  return db.updateTable('orgs').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Soft-deletes an active org; the slug claim stays, so the slug is reserved. Undefined if already gone. */
export async function softDeleteOrg(db: Executor, id: string, now: Date): Promise<OrgRow | undefined> {
  return db
    .updateTable('orgs')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Disables a deleted org's memberships (its brands, apps, … are disabled by their modules' handlers). */
export async function disableOrgMemberships(db: Executor, orgId: string, now: Date): Promise<void> {
  await db
    .updateTable('org_members')
    .set({ disabled_at: now })
    .where('org_id', '=', orgId)
    .where('disabled_at', 'is', null)
    .execute();
}

// ---------------------------------------------------------------- roles

export async function insertRoles(db: Executor, rows: RoleRow[]): Promise<void> {
  await db.insertInto('roles').values(rows).execute();
}

export async function listRoles(db: Executor, orgId: string): Promise<RoleRow[]> {
  // Built-in roles first in their fixed order (owner, admin, member), then custom roles by age.
  return db
    .selectFrom('roles')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy(sql`case built_in when 'owner' then 0 when 'admin' then 1 when 'member' then 2 else 3 end`)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** A role of this org; `lock` takes a share lock (assignments) or an update lock (edits). */
export async function findRole(
  db: Executor,
  orgId: string,
  roleId: string,
  lock?: 'share' | 'update',
): Promise<RoleRow | undefined> {
  let q = db.selectFrom('roles').selectAll().where('org_id', '=', orgId).where('id', '=', roleId);
  if (lock === 'share') q = q.forShare();
  if (lock === 'update') q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function findBuiltInRole(
  db: Executor,
  orgId: string,
  builtIn: 'owner' | 'admin' | 'member',
): Promise<RoleRow> {
  return db
    .selectFrom('roles')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('built_in', '=', builtIn)
    .executeTakeFirstOrThrow();
}

export async function insertRole(db: Executor, row: RoleRow): Promise<RoleRow> {
  return db.insertInto('roles').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateRole(
  db: Executor,
  id: string,
  patch: Partial<Pick<RoleRow, 'name' | 'description' | 'permissions' | 'updated_at'>>,
): Promise<RoleRow> {
  return db.updateTable('roles').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Deletes a role; the member_roles foreign key refuses it while anyone holds the role. */
export async function deleteRole(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('roles').where('id', '=', id).execute();
}

// ---------------------------------------------------------------- members

export interface MemberRow {
  user: UserRow;
  joinedAt: Date;
}

/** The active membership row, locked for the rest of the transaction. */
export async function lockMembership(db: Executor, orgId: string, userId: string) {
  return db
    .selectFrom('org_members')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('disabled_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Adds a membership; returns false when the user already was a member. */
export async function insertMembership(
  db: Executor,
  orgId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('org_members')
    .values({ org_id: orgId, user_id: userId, joined_at: now, disabled_at: null })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
    .returning('user_id')
    .executeTakeFirst();
  return !!row;
}

/** Gives a member a role; returns false when they already held it (idempotent). */
export async function insertMemberRole(
  db: Executor,
  orgId: string,
  userId: string,
  roleId: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('member_roles')
    .values({ org_id: orgId, user_id: userId, role_id: roleId, assigned_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'user_id', 'role_id']).doNothing())
    .returning('role_id')
    .executeTakeFirst();
  return !!row;
}

export async function deleteMemberRole(db: Executor, orgId: string, userId: string, roleId: string) {
  const res = await db
    .deleteFrom('member_roles')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('role_id', '=', roleId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Removes a membership (its role assignments cascade). */
export async function deleteMembership(db: Executor, orgId: string, userId: string): Promise<void> {
  await db.deleteFrom('org_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

/** The roles each of `userIds` holds in the org. */
export async function rolesOfMembers(
  db: Executor,
  orgId: string,
  userIds: string[],
): Promise<Map<string, RoleRow[]>> {
  const out = new Map<string, RoleRow[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows = await db
    .selectFrom('member_roles as mr')
    .innerJoin('roles as r', 'r.id', 'mr.role_id')
    .selectAll('r')
    .select('mr.user_id as member_user_id')
    .where('mr.org_id', '=', orgId)
    .where('mr.user_id', 'in', userIds)
    .orderBy(sql`case r.built_in when 'owner' then 0 when 'admin' then 1 when 'member' then 2 else 3 end`)
    .orderBy('r.name')
    .execute();
  for (const { member_user_id, ...role } of rows) out.get(member_user_id)?.push(role);
  return out;
}

/** Whether the user holds the org's built-in Owner role. */
export async function isOwner(db: Executor, orgId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('member_roles as mr')
    .innerJoin('roles as r', 'r.id', 'mr.role_id')
    .select('mr.user_id')
    .where('mr.org_id', '=', orgId)
    .where('mr.user_id', '=', userId)
    .where('r.org_id', '=', orgId)
    .where('r.built_in', '=', 'owner')
    .executeTakeFirst();
  return !!row;
}

/** Users holding a role in the org. */
export async function holdersOfRole(db: Executor, orgId: string, roleId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('member_roles')
    .select('user_id')
    .where('org_id', '=', orgId)
    .where('role_id', '=', roleId)
    .execute();
  return rows.map((r) => r.user_id);
}

/** Active members, oldest first, with their user rows. */
export async function listMembers(
  db: Executor,
  orgId: string,
  opts: { limit: number; offset: number; userId?: string },
): Promise<{ rows: MemberRow[]; total: number }> {
  let base = db
    .selectFrom('org_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', '=', orgId)
    .where('m.disabled_at', 'is', null);
  if (opts.userId) base = base.where('m.user_id', '=', opts.userId);
  const [rows, count] = await Promise.all([
    base
      .selectAll('u')
      .select('m.joined_at as member_joined_at')
      .orderBy('m.joined_at')
      .orderBy('m.user_id')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    rows: rows.map(({ member_joined_at, ...user }) => ({ user, joinedAt: member_joined_at })),
    total: Number(count.n),
  };
}

/**
 * The permission lists of an active member's roles in the org (one entry per role, null for a
 * member without roles); empty when the user is not an active member.
 */
export async function memberPermissionLists(
  db: Executor,
  orgId: string,
  userId: string,
): Promise<Array<string[] | null>> {
  const rows = await db
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
  return rows.map((r) => r.permissions);
}

/** A member's permissions read inside the transaction (after locks), or null if not an active member. */
export async function permissionsInTx(
  db: Executor,
  orgId: string,
  userId: string,
): Promise<Set<string> | null> {
  const member = await db
    .selectFrom('org_members')
    .select('user_id')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (!member) return null;
  const roles = await rolesOfMembers(db, orgId, [userId]);
  const perms = new Set<string>(['org.read']);
  for (const r of roles.get(userId) ?? []) for (const p of r.permissions) perms.add(p);
  return perms;
}
