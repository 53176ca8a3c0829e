import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, grantSystem, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { assertError, assertFieldError, auditRows, buildOrgsTestApp } from './helpers.js';

describe('admin mirror /admin/identity/organizations', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let nobody: TestUser;
  let viewer: TestUser;
  let editor: TestUser;
  let org: TestOrg;

  before(async () => {
    t = await buildOrgsTestApp();
    owner = await createUser(t);
    member = await createUser(t);
    nobody = await createUser(t);
    viewer = await createUser(t);
    editor = await createUser(t);
    await grantSystem(t, viewer.id, ['admin.orgs.view']);
    await grantSystem(t, editor.id, ['admin.orgs.view', 'admin.orgs.edit']);
    org = await seedOrg(t, owner);
    await addMember(t, org, member, 'member');
  });
  after(() => t.close());

  const admin = (o: TestOrg, rest = '') => `/admin/identity/organizations/${o.slug}${rest}`;

  it('lists every org with admin.orgs.view, and refuses without it', async () => {
    const res = await t.app.inject({ url: '/admin/identity/organizations?limit=100', headers: viewer.auth });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.ok(body.items.some((o: { id: string }) => o.id === org.id));
    assert.ok(body.items.some((o: { slug: string }) => o.slug === 'system'));
    assert.equal(body.total, body.items.length);
    for (const user of [owner, nobody]) {
      const refused = await t.app.inject({ url: '/admin/identity/organizations', headers: user.auth });
      assert.deepEqual(assertError(refused, 403, 'forbidden').details.missing, ['admin.orgs.view']);
    }
    assertError(await t.app.inject({ url: '/admin/identity/organizations' }), 401, 'unauthorized');
    assertFieldError(
      await t.app.inject({ url: '/admin/identity/organizations?limit=101', headers: viewer.auth }),
      'limit',
      'out_of_range',
    );
  });

  it('serves the org-scoped reads to admin.orgs.view without membership', async () => {
    for (const path of ['', '/members', '/roles', '/audit-log']) {
      const res = await t.app.inject({ url: admin(org, path), headers: viewer.auth });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    }
    assert.equal(json(await t.app.inject({ url: admin(org), headers: viewer.auth })).id, org.id);
    assert.equal(json(await t.app.inject({ url: admin(org, '/members'), headers: viewer.auth })).total, 2);
  });

  it('refuses every mirror route without the system permission, even to the org Owner', async () => {
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/members'],
      ['GET', '/roles'],
      ['GET', '/audit-log'],
    ] as const) {
      const res = await t.app.inject({ method, url: admin(org, path), headers: owner.auth });
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['admin.orgs.view'], path);
    }
    for (const [method, path, payload] of [
      ['PATCH', '', { name: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/roles', { name: 'x', permissions: [] }],
      ['POST', `/members/${member.id}/roles`, { roleId: org.roles.admin }],
      ['DELETE', `/members/${member.id}`, undefined],
      ['POST', '/transfer-ownership', { newOwnerUserId: member.id }],
    ] as const) {
      for (const user of [owner, viewer]) {
        const res = await t.app.inject({ method, url: admin(org, path), headers: user.auth, payload });
        assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['admin.orgs.edit'], path);
      }
    }
    assert.deepEqual(
      json(await t.app.inject({ url: admin(org, '/members'), headers: viewer.auth }))
        .items.map((m: { roles: Array<{ name: string }> }) => m.roles[0].name)
        .sort(),
      ['Member', 'Owner'],
    );
  });

  it('is 404 for an unknown org once the system permission is there', async () => {
    assertError(
      await t.app.inject({ url: '/admin/identity/organizations/no-such', headers: viewer.auth }),
      404,
      'not_found',
    );
  });

  it('lets admin.orgs.edit change any org, recorded with the operator as actor', async () => {
    const o = await seedOrg(t, owner);
    const patch = await t.app.inject({
      method: 'PATCH',
      url: admin(o),
      headers: editor.auth,
      payload: { name: 'Operated' },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(json(patch).name, 'Operated');

    const role = await t.app.inject({
      method: 'POST',
      url: admin(o, '/roles'),
      headers: editor.auth,
      payload: { name: 'Deleter', permissions: ['org.delete'] },
    });
    assert.equal(role.statusCode, 201, role.body);

    const newcomer = await createUser(t);
    const added = await t.app.inject({
      method: 'POST',
      url: admin(o, `/members/${newcomer.id}/roles`),
      headers: editor.auth,
      payload: { roleId: o.roles.member },
    });
    assert.equal(added.statusCode, 201, added.body);

    const transferred = await t.app.inject({
      method: 'POST',
      url: admin(o, '/transfer-ownership'),
      headers: editor.auth,
      payload: { newOwnerUserId: newcomer.id },
    });
    assert.equal(transferred.statusCode, 200, transferred.body);
    assert.deepEqual(
      json(transferred)
        .roles.map((r: { name: string }) => r.name)
        .sort(),
      ['Member', 'Owner'],
    );

    const removed = await t.app.inject({
      method: 'DELETE',
      url: admin(o, `/members/${owner.id}`),
      headers: editor.auth,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    // The mirror still keeps the interface's rules: the Owner stays.
    assertError(
      await t.app.inject({
        method: 'DELETE',
        url: admin(o, `/members/${newcomer.id}`),
        headers: editor.auth,
      }),
      422,
      'unprocessable_entity',
    );

    const audit = await auditRows(t, o.id);
    const byOperator = audit.filter((a) => a.actor_user_id === editor.id).map((a) => a.action);
    assert.deepEqual(byOperator.sort(), [
      'member.added',
      'member.removed',
      'org.ownership.transferred',
      'org.updated',
      'role.created',
    ]);

    const del = await t.app.inject({ method: 'DELETE', url: admin(o), headers: editor.auth });
    assert.equal(del.statusCode, 204);
    assertError(await t.app.inject({ url: admin(o), headers: editor.auth }), 404, 'not_found');
  });

  it('refuses to delete the system org even for an operator (422)', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/admin/identity/organizations/system',
      headers: editor.auth,
    });
    assertError(res, 422, 'unprocessable_entity');
  });

  it("holds an operator's API key to its scopes on the mirror", async () => {
    const key = 'ghsk_test_orgs_admin_mirror_scoped_key';
    const previous = t.ctx.hooks.apiKeyVerifier;
    // Stands in for the users module's verifier: the operator's key, scoped to reading brands.
    t.ctx.hooks.apiKeyVerifier = async (presented) =>
      presented === key
        ? { kind: 'api_key', userId: editor.id, scopes: ['org.brands.view'], apiKeyId: 'k1' }
        : null;
    try {
      const headers = { authorization: `Bearer ${key}` };
      const target = await seedOrg(t, owner);
      const refused = [
        await t.app.inject({ method: 'DELETE', url: admin(target), headers }),
        await t.app.inject({
          method: 'POST',
          url: admin(target, '/brands'),
          headers,
          payload: { slug: 'from-a-key', name: 'From a key' },
        }),
        await t.app.inject({ url: admin(target, '/members'), headers }),
        await t.app.inject({ url: admin(target, '/brands'), headers }),
        await t.app.inject({ url: '/admin/identity/organizations', headers }),
      ];
      for (const res of refused) assertError(res, 403, 'forbidden');
      // Without admin.orgs.view in its scopes the key lists only the operator's own orgs.
      const list = await t.app.inject({ url: '/identity/organizations?limit=100', headers });
      assert.equal(list.statusCode, 200, list.body);
      assert.ok(!json(list).items.some((o: { id: string }) => o.id === target.id));
      const row = await t.ctx.db
        .selectFrom('orgs')
        .select('deleted_at')
        .where('id', '=', target.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.deleted_at, null);
      // A key whose scopes allow the system permission works as before.
      t.ctx.hooks.apiKeyVerifier = async (presented) =>
        presented === key ? { kind: 'api_key', userId: editor.id, scopes: ['admin.orgs.view'] } : null;
      const allowed = await t.app.inject({ url: admin(target, '/brands'), headers });
      assert.equal(allowed.statusCode, 200, allowed.body);
      const listed = await t.app.inject({ url: '/admin/identity/organizations', headers });
      assert.equal(listed.statusCode, 200, listed.body);
    } finally {
      t.ctx.hooks.apiKeyVerifier = previous;
    }
  });

  it('does not give system permissions membership rights on the member routes', async () => {
    const res = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: editor.auth });
    assertError(res, 404, 'not_found');
  });
});
