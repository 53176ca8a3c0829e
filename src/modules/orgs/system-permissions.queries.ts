import type { Executor } from '../../db/schema.js';

/** The system permissions (`admin.*`) a user holds. */
export async function systemPermissionsOf(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('system_permissions')
    .select('permission')
    .where('user_id', '=', userId)
    .execute();
  return rows.map((r) => r.permission);
}

/** Grants each permission (already held ones are kept as they are). */
export async function grantSystemPermissions(
  db: Executor,
  userId: string,
  permissions: string[],
  now: Date,
): Promise<void> {
  await db
    .insertInto('system_permissions')
    .values(permissions.map((permission) => ({ user_id: userId, permission, granted_at: now })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function revokeSystemPermissions(
  db: Executor,
  userId: string,
  permissions: string[],
): Promise<void> {
  await db
    .deleteFrom('system_permissions')
    .where('user_id', '=', userId)
    .where('permission', 'in', permissions)
    .execute();
}
