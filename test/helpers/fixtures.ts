import { builtInRoleRows } from '../../src/bootstrap.js';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import type { TestApp, TestUser } from './app.js';

export interface TestOrg {
  id: string;
  slug: string;
  roles: Record<'owner' | 'admin' | 'member', string>;
}

/**
 * An org with `owner` as Owner, inserted directly so that modules can be tested without going
 * through the org routes. Prefer the public API where a test is about orgs themselves.
 */
export async function seedOrg(
  t: TestApp,
  owner: TestUser,
  slug = `org-${randomAlphanumeric(8).toLowerCase()}`,
): Promise<TestOrg> {
  const id = newId('org_');
  const now = t.clock.now();
  await t.ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('orgs')
      .values({
        id,
        name: slug,
        slug,
        slug_claim: slug,
        description: null,
        icon_file_id: null,
        created_by: owner.id,
        payment_product_id: null,
        payment_customer_id: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    await trx.insertInto('roles').values(builtInRoleRows(id, now)).execute();
  });
  const rows = await t.ctx.db
    .selectFrom('roles')
    .select(['id', 'built_in'])
    .where('org_id', '=', id)
    .execute();
  const roles = Object.fromEntries(rows.map((r) => [r.built_in, r.id])) as TestOrg['roles'];
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
