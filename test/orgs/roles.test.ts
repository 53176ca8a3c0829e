import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { assertError, assertFieldError, auditRows, buildOrgsTestApp, recordCounts } from './helpers.js';

describe('roles', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;

  before(async () => {
    t = await buildOrgsTestApp();
    owner = await createUser(t);
    admin = await createUser(t);
    member = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    await addMember(t, org, admin, 'admin');
    await addMember(t, org, member, 'member');
    otherOrg = await seedOrg(t, outsider);
  });
  after(() => t.close());

  const url = (o: TestOrg, rest = '') => `/identity/organizations/${o.slug}/roles${rest}`;
  const create = (user: TestUser, payload: Record<string, unknown>, o = org) =>
    t.app.inject({ method: 'POST', url: url(o), headers: user.auth, payload });
  const patch = (user: TestUser, roleId: string, payload: Record<string, unknown>, o = org) =>
    t.app.inject({ method: 'PATCH', url: url(o, `/${roleId}`), headers: user.auth, payload });
  const del = (user: TestUser, roleId: string, o = org) =>
    t.app.inject({ method: 'DELETE', url: url(o, `/${roleId}`), headers: user.auth });
  let n = 0;
  const roleName = () => `Role ${++n}`;

  describe('GET roles', () => {
    it('lists built-in and custom roles to any member (org.read)', async () => {
      const created = json(await create(owner, { name: roleName(), permissions: ['org.apps.view'] }));
      const res = await t.app.inject({ url: url(org), headers: member.auth });
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.deepEqual(
        body.items.slice(0, 3).map((r: { name: string }) => r.name),
        ['Owner', 'Admin', 'Member'],
      );
      assert.equal(body.total, body.items.length);
      const owner_ = body.items[0];
      assert.equal(owner_.isBuiltIn, true);
      assert.ok(owner_.permissions.includes('org.delete'));
      assert.ok(!body.items[1].permissions.includes('org.delete'));
      assert.ok(body.items.some((r: { id: string }) => r.id === created.id));
    });

    it('is 404 to outsiders', async () => {
      assertError(await t.app.inject({ url: url(org), headers: outsider.auth }), 404, 'not_found');
    });
  });

  describe('POST roles', () => {
    it('creates a custom role, accepting both permission forms and storing the dotted form', async () => {
      const name = roleName();
      const res = await create(owner, {
        name,
        description: 'Reads members',
        permissions: ['IdentityOrgPermission.MembersView', 'org.members.view', 'org.tokenGates.edit'],
      });
      assert.equal(res.statusCode, 201, res.body);
      const role = json(res);
      assert.match(role.id, /^role_/);
      assert.equal(role.name, name);
      assert.equal(role.description, 'Reads members');
      assert.equal(role.isBuiltIn, false);
      assert.deepEqual(role.permissions, ['org.members.view', 'org.tokenGates.edit']);
      assert.equal(role.createdAt, t.clock.now().toISOString());
      const stored = await t.ctx.db
        .selectFrom('roles')
        .selectAll()
        .where('id', '=', role.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored.permissions, ['org.members.view', 'org.tokenGates.edit']);
      const audit = (await auditRows(t, org.id)).find((a) => a.resource_id === role.id)!;
      assert.equal(audit.action, 'role.created');
      assert.equal(audit.resource_type, 'role');
      assert.equal(audit.actor_user_id, owner.id);
    });

    it('validates name, description and permissions', async () => {
      const before = await recordCounts(t, org.id);
      assertFieldError(await create(owner, { permissions: [] }), 'name', 'required');
      assertFieldError(await create(owner, { name: roleName() }), 'permissions', 'required');
      assertFieldError(await create(owner, { name: '', permissions: [] }), 'name', 'too_short');
      assertFieldError(await create(owner, { name: 'r'.repeat(61), permissions: [] }), 'name', 'too_long');
      assertFieldError(
        await create(owner, { name: roleName(), description: 'd'.repeat(501), permissions: [] }),
        'description',
        'too_long',
      );
      assertFieldError(
        await create(owner, { name: roleName(), permissions: 'org.read' }),
        'permissions',
        'invalid_type',
      );
      assertFieldError(
        await create(owner, { name: roleName(), permissions: ['org.read', 'org.nope'] }),
        'permissions.1',
        'invalid_value',
      );
      assertFieldError(
        await create(owner, { name: roleName(), permissions: ['admin.orgs.view'] }),
        'permissions.0',
        'invalid_value',
      );
      assertFieldError(
        await create(owner, { name: roleName(), permissions: ['AdminPermission.OrgsEdit'] }),
        'permissions.0',
        'invalid_value',
      );
      assertFieldError(
        await create(owner, { name: roleName(), permissions: [], isBuiltIn: true }),
        'isBuiltIn',
        'unknown_field',
      );
      assert.deepEqual(await recordCounts(t, org.id), before);
      assert.equal((await create(owner, { name: 'r'.repeat(60), permissions: [] })).statusCode, 201);
    });

    it('refuses a duplicate name in the org with 409, including a built-in name', async () => {
      const name = roleName();
      assert.equal((await create(owner, { name, permissions: [] })).statusCode, 201);
      assertError(await create(owner, { name, permissions: ['org.read'] }), 409, 'conflict');
      assertError(await create(owner, { name: 'Owner', permissions: [] }), 409, 'conflict');
      // The same name in another org is fine.
      assert.equal((await create(outsider, { name, permissions: [] }, otherOrg)).statusCode, 201);
    });

    it('needs org.members.edit (403 with details.missing) and is 404 to outsiders', async () => {
      const res = await create(member, { name: roleName(), permissions: [] });
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.members.edit']);
      assertError(await create(outsider, { name: roleName(), permissions: [] }), 404, 'not_found');
    });

    it('refuses an Admin creating a role with a permission the Admin lacks', async () => {
      const before = await recordCounts(t, org.id);
      const res = await create(admin, {
        name: roleName(),
        permissions: ['org.read', 'org.delete', 'IdentityOrgPermission.OwnershipTransfer'],
      });
      const err = assertError(res, 403, 'forbidden');
      assert.deepEqual(err.details.missing, ['org.delete', 'org.ownership.transfer']);
      assert.deepEqual(await recordCounts(t, org.id), before);
      const ok = await create(admin, {
        name: roleName(),
        permissions: ['org.apps.edit', 'org.webhooks.view'],
      });
      assert.equal(ok.statusCode, 201);
    });
  });

  describe('API keys', () => {
    it('a scoped key cannot create a role wider than its scopes, even for the Owner', async () => {
      const key = 'ghsk_test_orgs_roles_scoped_key';
      const previous = t.ctx.hooks.apiKeyVerifier;
      // Stands in for the users module's verifier: this key belongs to the Owner, scoped to role edits.
      t.ctx.hooks.apiKeyVerifier = async (presented) =>
        presented === key
          ? { kind: 'api_key', userId: owner.id, scopes: ['org.members.edit'], apiKeyId: 'k1' }
          : null;
      try {
        const headers = { authorization: `Bearer ${key}` };
        const wide = await t.app.inject({
          method: 'POST',
          url: url(org),
          headers,
          payload: { name: roleName(), permissions: ['org.members.edit', 'org.delete'] },
        });
        assert.deepEqual(assertError(wide, 403, 'forbidden').details.missing, ['org.delete']);
        const narrow = await t.app.inject({
          method: 'POST',
          url: url(org),
          headers,
          payload: { name: roleName(), permissions: ['org.members.edit'] },
        });
        assert.equal(narrow.statusCode, 201, narrow.body);
      } finally {
        t.ctx.hooks.apiKeyVerifier = previous;
      }
    });
  });

  describe('PATCH roles/:roleId', () => {
    it('renames, clears the description and replaces the permission list', async () => {
      const role = json(
        await create(owner, {
          name: roleName(),
          description: 'old',
          permissions: ['org.apps.view', 'org.brands.view'],
        }),
      );
      t.clock.advance(5);
      const name = roleName();
      const res = await patch(owner, role.id, {
        name,
        description: null,
        permissions: ['IdentityOrgPermission.WebhooksView'],
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.name, name);
      assert.equal(body.description, undefined);
      assert.deepEqual(body.permissions, ['org.webhooks.view']);
      assert.equal(body.updatedAt, t.clock.now().toISOString());
      assert.notEqual(body.updatedAt, body.createdAt);
      const audit = (await auditRows(t, org.id)).find(
        (a) => a.action === 'role.updated' && a.resource_id === role.id,
      )!;
      assert.deepEqual(audit.metadata, {
        before: { name: role.name, description: 'old', permissions: ['org.brands.view', 'org.apps.view'] },
        after: { name, description: null, permissions: ['org.webhooks.view'] },
      });
    });

    it('refuses to edit a built-in role with 422', async () => {
      for (const key of ['owner', 'admin', 'member'] as const) {
        assertError(await patch(owner, org.roles[key], { name: 'Boss' }), 422, 'unprocessable_entity');
      }
      assertError(
        await patch(owner, org.roles.member, { permissions: ['org.read'] }),
        422,
        'unprocessable_entity',
      );
      const stored = await t.ctx.db
        .selectFrom('roles')
        .select('name')
        .where('id', '=', org.roles.owner)
        .executeTakeFirstOrThrow();
      assert.equal(stored.name, 'Owner');
    });

    it('refuses an Admin widening a role, or changing one that carries a permission the Admin lacks', async () => {
      const plain = json(await create(owner, { name: roleName(), permissions: ['org.read'] }));
      const widen = await patch(admin, plain.id, { permissions: ['org.read', 'org.ownership.transfer'] });
      assert.deepEqual(assertError(widen, 403, 'forbidden').details.missing, ['org.ownership.transfer']);
      const powerful = json(await create(owner, { name: roleName(), permissions: ['org.delete'] }));
      const narrow = await patch(admin, powerful.id, { permissions: [] });
      assert.deepEqual(assertError(narrow, 403, 'forbidden').details.missing, ['org.delete']);
      const rename = await patch(admin, powerful.id, { name: roleName() });
      assertError(rename, 403, 'forbidden');
      const stored = await t.ctx.db
        .selectFrom('roles')
        .select(['name', 'permissions'])
        .where('id', '=', powerful.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored, { name: powerful.name, permissions: ['org.delete'] });
    });

    it('validates the body and refuses a duplicate name', async () => {
      const role = json(await create(owner, { name: roleName(), permissions: [] }));
      const taken = json(await create(owner, { name: roleName(), permissions: [] }));
      assertError(await patch(owner, role.id, {}), 400, 'validation_failed');
      assertFieldError(await patch(owner, role.id, { name: '' }), 'name', 'too_short');
      assertFieldError(await patch(owner, role.id, { name: 'x'.repeat(61) }), 'name', 'too_long');
      assertFieldError(
        await patch(owner, role.id, { description: 'd'.repeat(501) }),
        'description',
        'too_long',
      );
      assertFieldError(
        await patch(owner, role.id, { permissions: ['org.bogus'] }),
        'permissions.0',
        'invalid_value',
      );
      assertFieldError(await patch(owner, role.id, { isBuiltIn: true }), 'isBuiltIn', 'unknown_field');
      assertError(await patch(owner, role.id, { name: taken.name }), 409, 'conflict');
    });

    it("is 404 for an unknown role and for another org's role", async () => {
      assertError(await patch(owner, 'role_missing', { name: 'x' }), 404, 'not_found');
      const foreign = json(await create(outsider, { name: roleName(), permissions: [] }, otherOrg));
      const res = await patch(owner, foreign.id, { name: 'Stolen' });
      assertError(res, 404, 'not_found');
      assert.ok(!res.body.includes(otherOrg.id));
      assertError(await patch(member, foreign.id, { name: 'x' }), 403, 'forbidden');
    });
  });

  describe('DELETE roles/:roleId', () => {
    it('deletes an unused custom role (204) and audits it', async () => {
      const role = json(await create(owner, { name: roleName(), permissions: ['org.read'] }));
      const res = await del(owner, role.id);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      const list = json(await t.app.inject({ url: url(org), headers: owner.auth }));
      assert.ok(!list.items.some((r: { id: string }) => r.id === role.id));
      const audit = (await auditRows(t, org.id)).find(
        (a) => a.action === 'role.deleted' && a.resource_id === role.id,
      );
      assert.ok(audit);
    });

    it('refuses with 409 while a member holds the role, and allows it once nobody does', async () => {
      const role = json(await create(owner, { name: roleName(), permissions: ['org.read'] }));
      const holder = await createUser(t);
      await addMember(t, org, holder, role.id);
      const before = await recordCounts(t, org.id);
      assertError(await del(owner, role.id), 409, 'conflict');
      assert.deepEqual(await recordCounts(t, org.id), before);
      const stillThere = await t.ctx.db
        .selectFrom('roles')
        .select('id')
        .where('id', '=', role.id)
        .executeTakeFirst();
      assert.ok(stillThere);
      await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}/members/${holder.id}`,
        headers: owner.auth,
      });
      assert.equal((await del(owner, role.id)).statusCode, 204);
    });

    it('refuses to delete a built-in role (422)', async () => {
      const unused = await seedOrg(t, outsider);
      // Even with no holder, a built-in role stays.
      assertError(await del(outsider, unused.roles.member, unused), 422, 'unprocessable_entity');
      assertError(await del(owner, org.roles.admin), 422, 'unprocessable_entity');
    });

    it('needs org.members.edit, and the permissions the role carries', async () => {
      const role = json(await create(owner, { name: roleName(), permissions: ['org.delete'] }));
      assert.deepEqual(assertError(await del(member, role.id), 403, 'forbidden').details.missing, [
        'org.members.edit',
      ]);
      assert.deepEqual(assertError(await del(admin, role.id), 403, 'forbidden').details.missing, [
        'org.delete',
      ]);
    });

    it("is 404 for another org's role", async () => {
      const foreign = json(await create(outsider, { name: roleName(), permissions: [] }, otherOrg));
      assertError(await del(owner, foreign.id), 404, 'not_found');
      assertError(await del(outsider, foreign.id), 404, 'not_found');
      const stillThere = await t.ctx.db
        .selectFrom('roles')
        .select('id')
        .where('id', '=', foreign.id)
        .executeTakeFirst();
      assert.ok(stillThere);
    });
  });
});
