import { builtInRoleRows } from '../../src/bootstrap.js';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import type { Db } from '../../src/db/schema.js';
import type { TestApp, TestUser } from './app.js';

export interface TestOrg {
  id: string;
  slug: string;
  roles: Record<'owner' | 'admin' | 'member', string>;
}

/**
 * Inserts an org and its built-in roles directly (tests and benchmark seeding), returning the role
 * ids. Prefer the public API where a test is about orgs themselves.
 */
export async function insertOrg(
  db: Db,
  org: { id: string; slug: string; createdBy: string; now: Date },
): Promise<TestOrg['roles']> {
  const roles = builtInRoleRows(org.id, org.now);
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('orgs')
      .values({
        id: org.id,
        name: org.slug,
        slug: org.slug,
        slug_claim: org.slug,
        description: null,
        icon_file_id: null,
        created_by: org.createdBy,
        payment_product_id: null,
        payment_customer_id: null,
        created_at: org.now,
        updated_at: org.now,
        deleted_at: null,
      })
      .execute();
    await trx.insertInto('roles').values(roles).execute();
  });
  return Object.fromEntries(roles.map((r) => [r.built_in, r.id])) as TestOrg['roles'];
}

/** An org with `owner` as Owner, inserted directly so that modules can be tested without the org routes. */
export async function seedOrg(
  t: TestApp,
  owner: TestUser,
  slug = `org-${randomAlphanumeric(8).toLowerCase()}`,
): Promise<TestOrg> {
  const id = newId('org_');
  const roles = await insertOrg(t.ctx.db, { id, slug, createdBy: owner.id, now: t.clock.now() });
  await addMember(t, { id, slug, roles }, owner, 'owner');
  return { id, slug, roles };
}

/** Adds `user` to the org with one of the built-in roles (or a role id). */
export async function addMember(
  t: TestApp,
  org: TestOrg,
  user: TestUser,
  role: 'owner' | 'admin' | 'member' | string,
): Promise<void> {
  const roleId = role in org.roles ? org.roles[role as 'owner'] : role;
  const now = t.clock.now();
  await t.ctx.db
    .insertInto('org_members')
    .values({ org_id: org.id, user_id: user.id, joined_at: now, disabled_at: null })
    .onConflict((oc) => oc.doNothing())
    .execute();
  await t.ctx.db
    .insertInto('member_roles')
    .values({ org_id: org.id, user_id: user.id, role_id: roleId, assigned_at: now })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
