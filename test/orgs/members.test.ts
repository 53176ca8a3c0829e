import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { addEventSink } from '../../src/events/outbox.js';
import { storeFile } from '../../src/modules/files/files.service.js';
import { createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import {
  assertError,
  assertFieldError,
  auditRows,
  buildOrgsTestApp,
  eventRows,
  recordCounts,
} from './helpers.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** Orgs whose event sink fails, to prove audit, events and the change commit together or not at all. */
const failingOrgs = new Set<string>();
addEventSink(async (_trx, event) => {
  if (failingOrgs.has(event.orgId)) throw new Error('sink failure');
});

describe('members', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;

  before(async () => {
    t = await buildOrgsTestApp();
    outsider = await createUser(t);
    otherOrg = await seedOrg(t, outsider);
  });
  after(() => t.close());

  // A fresh org per test keeps each test's roles and events its own.
  beforeEach(async () => {
    owner = await createUser(t);
    admin = await createUser(t);
    member = await createUser(t);
    org = await seedOrg(t, owner);
    t.clock.advance(1);
    await addMember(t, org, admin, 'admin');
    t.clock.advance(1);
    await addMember(t, org, member, 'member');
  });

  const base = (o: TestOrg) => `/identity/organizations/${o.slug}`;
  const list = (user: TestUser, qs = '', o = org) =>
    t.app.inject({ url: `${base(o)}/members${qs}`, headers: user.auth });
  const assign = (user: TestUser, userId: string, roleId: unknown, o = org) =>
    t.app.inject({
      method: 'POST',
      url: `${base(o)}/members/${userId}/roles`,
      headers: user.auth,
      payload: { roleId },
    });
  const unassign = (user: TestUser, userId: string, roleId: string, o = org) =>
    t.app.inject({
      method: 'DELETE',
      url: `${base(o)}/members/${userId}/roles/${roleId}`,
      headers: user.auth,
    });
  const remove = (user: TestUser, userId: string, o = org) =>
    t.app.inject({ method: 'DELETE', url: `${base(o)}/members/${userId}`, headers: user.auth });
  const transfer = (user: TestUser, payload: Record<string, unknown>, o = org) =>
    t.app.inject({ method: 'POST', url: `${base(o)}/transfer-ownership`, headers: user.auth, payload });
  const createRole = async (permissions: string[]) =>
    json(
      await t.app.inject({
        method: 'POST',
        url: `${base(org)}/roles`,
        headers: owner.auth,
        payload: { name: `R ${Math.random()}`, permissions },
      }),
    );
  const rolesOf = async (userId: string) =>
    (
      await t.ctx.db
        .selectFrom('member_roles as mr')
        .innerJoin('roles as r', 'r.id', 'mr.role_id')
        .select('r.name')
        .where('mr.org_id', '=', org.id)
        .where('mr.user_id', '=', userId)
        .orderBy('r.name')
        .execute()
    ).map((r) => r.name);
  const owners = async () =>
    (
      await t.ctx.db
        .selectFrom('member_roles')
        .select('user_id')
        .where('role_id', '=', org.roles.owner)
        .execute()
    ).map((r) => r.user_id);

  describe('GET members', () => {
    it('lists members with the full User shape, roles and joinedAt, oldest first', async () => {
      const file = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: member.id });
      await t.ctx.db
        .updateTable('users')
        .set({
          first_name: 'Ada',
          last_name: 'Lovelace',
          preferred_language: 'en',
          profile_picture_id: file.id,
          external_profile_picture_url: 'https://img.example/ada.png',
          email: 'ada@example.com',
          phone_number: '5550100',
        })
        .where('id', '=', member.id)
        .execute();
      const res = await list(admin);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.total, 3);
      assert.deepEqual(
        body.items.map((m: { userId: string }) => m.userId),
        [owner.id, admin.id, member.id],
      );
      const [o, , m] = body.items;
      assert.deepEqual(o.roles, [{ id: org.roles.owner, name: 'Owner' }]);
      assert.deepEqual(Object.keys(m).sort(), ['joinedAt', 'roles', 'user', 'userId']);
      assert.deepEqual(m.roles, [{ id: org.roles.member, name: 'Member' }]);
      assert.equal(typeof m.joinedAt, 'string');
      assert.equal(m.user.id, member.id);
      assert.equal(m.user.username, member.username);
      assert.equal(m.user.firstName, 'Ada');
      assert.equal(m.user.lastName, 'Lovelace');
      assert.equal(m.user.preferredLanguage, 'en');
      assert.equal(m.user.externalProfilePictureUrl, 'https://img.example/ada.png');
      assert.deepEqual(m.user.profilePicture, {
        fileKey: file.fileKey,
        url: file.url,
        contentType: 'image/png',
        bytes: file.bytes,
      });
      assert.equal(typeof m.user.lastSeen, 'string');
      // Private fields never leave.
      assert.ok(!res.body.includes('ada@example.com'));
      assert.ok(!res.body.includes('5550100'));
    });

    it('pages with limit and offset, total counting everyone', async () => {
      const page = json(await list(owner, '?limit=1&offset=1'));
      assert.equal(page.total, 3);
      assert.deepEqual(
        page.items.map((m: { userId: string }) => m.userId),
        [admin.id],
      );
      assertFieldError(await list(owner, '?limit=0'), 'limit', 'out_of_range');
      assertFieldError(await list(owner, '?limit=201'), 'limit', 'out_of_range');
      assertFieldError(await list(owner, '?offset=-1'), 'offset', 'out_of_range');
    });

    it('needs org.members.view (403 with details.missing) and is 404 to outsiders', async () => {
      const readOnly = await createRole(['org.read']);
      const reader = await createUser(t);
      await addMember(t, org, reader, readOnly.id);
      assert.deepEqual(assertError(await list(reader), 403, 'forbidden').details.missing, [
        'org.members.view',
      ]);
      assertError(await list(outsider), 404, 'not_found');
    });
  });

  describe('POST members/:userId/roles', () => {
    it('gives a member a role (201), firing member.role.changed, and is idempotent', async () => {
      const role = await createRole(['org.apps.view']);
      const res = await assign(admin, member.id, role.id);
      assert.equal(res.statusCode, 201, res.body);
      const item = json(res);
      assert.equal(item.userId, member.id);
      assert.deepEqual(
        item.roles.map((r: { id: string }) => r.id).sort(),
        [org.roles.member, role.id].sort(),
      );
      const counts = await recordCounts(t, org.id);
      const again = await assign(admin, member.id, role.id);
      assert.equal(again.statusCode, 201);
      assert.deepEqual(json(again), item);
      assert.deepEqual(await recordCounts(t, org.id), counts);

      const events = (await eventRows(t, org.id)).filter((e) => e.type === 'member.role.changed');
      assert.deepEqual(
        events.map((e) => e.data),
        [{ user: member.id, added: [role.name], removed: [] }],
      );
      const audit = (await auditRows(t, org.id)).filter((a) => a.action === 'member.role.added');
      assert.equal(audit.length, 1);
      assert.equal(audit[0].resource_id, member.id);
      assert.equal(audit[0].actor_user_id, admin.id);
    });

    it('is 404 for a user who is not a member: people join by invitation', async () => {
      const stranger = await createUser(t);
      const counts = await recordCounts(t, org.id);
      const res = await assign(admin, stranger.id, org.roles.member);
      assertError(res, 404, 'not_found');
      assert.doesNotMatch(res.body, new RegExp(stranger.id), 'nothing of the stranger is shown');
      assert.deepEqual(await recordCounts(t, org.id), counts);
      assertError(await t.app.inject({ url: base(org), headers: stranger.auth }), 404, 'not_found');
      const members = json(await t.app.inject({ url: `${base(org)}/members`, headers: admin.auth }));
      assert.ok(!members.items.some((m: { userId: string }) => m.userId === stranger.id));
    });

    it('is 404 for an unknown user and for a role of another org', async () => {
      assertError(await assign(owner, 'usr_nobody', org.roles.member), 404, 'not_found');
      assertError(await assign(owner, member.id, otherOrg.roles.member), 404, 'not_found');
      assertError(await assign(owner, member.id, 'role_unknown'), 404, 'not_found');
      const deleted = await createUser(t);
      await t.ctx.db
        .updateTable('users')
        .set({ deleted_at: t.clock.now() })
        .where('id', '=', deleted.id)
        .execute();
      assertError(await assign(owner, deleted.id, org.roles.member), 404, 'not_found');
    });

    it('validates the body', async () => {
      assertFieldError(await assign(owner, member.id, undefined), 'roleId', 'required');
      assertFieldError(await assign(owner, member.id, 42), 'roleId', 'invalid_type');
      assertFieldError(await assign(owner, member.id, ''), 'roleId', 'too_short');
      const extra = await t.app.inject({
        method: 'POST',
        url: `${base(org)}/members/${member.id}/roles`,
        headers: owner.auth,
        payload: { roleId: org.roles.admin, force: true },
      });
      assertFieldError(extra, 'force', 'unknown_field');
    });

    it('needs org.members.edit (403) and is 404 to outsiders', async () => {
      const res = await assign(member, member.id, org.roles.admin);
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.members.edit']);
      assertError(await assign(outsider, member.id, org.roles.admin), 404, 'not_found');
      assert.deepEqual(await rolesOf(member.id), ['Member']);
    });

    it('refuses escalation: an Admin cannot make themselves Owner or assign a role they do not cover', async () => {
      const before = await recordCounts(t, org.id);
      const self = await assign(admin, admin.id, org.roles.owner);
      assert.deepEqual(assertError(self, 403, 'forbidden').details.missing, [
        'org.delete',
        'org.ownership.transfer',
      ]);
      const powerful = await createRole(['org.delete']);
      const res = await assign(admin, member.id, powerful.id);
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.delete']);
      assert.deepEqual(await rolesOf(admin.id), ['Admin']);
      assert.deepEqual(await rolesOf(member.id), ['Member']);
      assert.equal((await recordCounts(t, org.id)).audit, before.audit + 1); // the role creation only
    });

    it('keeps the Owner role for transfer-ownership (422)', async () => {
      assertError(await assign(owner, member.id, org.roles.owner), 422, 'unprocessable_entity');
      assert.deepEqual(await owners(), [owner.id]);
    });

    it('writes nothing when the mutation fails after the audit entry', async () => {
      const role = await createRole(['org.read']);
      const before = await recordCounts(t, org.id);
      failingOrgs.add(org.id);
      try {
        assertError(await assign(owner, member.id, role.id), 500, 'internal_error');
      } finally {
        failingOrgs.delete(org.id);
      }
      assert.deepEqual(await recordCounts(t, org.id), before);
      assert.deepEqual(await rolesOf(member.id), ['Member']);
    });
  });

  describe('DELETE members/:userId/roles/:roleId', () => {
    it('takes a role (204), firing member.role.changed', async () => {
      await assign(owner, member.id, org.roles.admin);
      t.clock.advance(1);
      const res = await unassign(owner, member.id, org.roles.admin);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.deepEqual(await rolesOf(member.id), ['Member']);
      const events = (await eventRows(t, org.id)).filter((e) => e.type === 'member.role.changed');
      assert.deepEqual(
        events.map((e) => e.data),
        [
          { user: member.id, added: ['Admin'], removed: [] },
          { user: member.id, added: [], removed: ['Admin'] },
        ],
      );
      assert.ok((await auditRows(t, org.id)).some((a) => a.action === 'member.role.removed'));
    });

    it('refuses to take the last role (422) and the Owner role (422)', async () => {
      const before = await recordCounts(t, org.id);
      assertError(await unassign(owner, member.id, org.roles.member), 422, 'unprocessable_entity');
      assertError(await unassign(owner, owner.id, org.roles.owner), 422, 'unprocessable_entity');
      assert.deepEqual(await recordCounts(t, org.id), before);
      assert.deepEqual(await rolesOf(member.id), ['Member']);
    });

    it('is 404 for a role not held, a non-member and another org', async () => {
      assertError(await unassign(owner, member.id, org.roles.admin), 404, 'not_found');
      assertError(await unassign(owner, outsider.id, org.roles.member), 404, 'not_found');
      assertError(await unassign(owner, outsider.id, otherOrg.roles.owner), 404, 'not_found');
      assertError(await unassign(outsider, member.id, org.roles.member), 404, 'not_found');
    });

    it('needs org.members.edit, and the permissions the role carries', async () => {
      await assign(owner, admin.id, org.roles.member);
      assert.deepEqual(
        assertError(await unassign(member, admin.id, org.roles.member), 403, 'forbidden').details.missing,
        ['org.members.edit'],
      );
      const powerful = await createRole(['org.delete']);
      await assign(owner, member.id, powerful.id);
      assert.deepEqual(
        assertError(await unassign(admin, member.id, powerful.id), 403, 'forbidden').details.missing,
        ['org.delete'],
      );
    });

    it('takes effect on the next request (permissions are read live)', async () => {
      await assign(owner, admin.id, org.roles.member);
      assert.equal(
        (await t.app.inject({ method: 'PATCH', url: base(org), headers: admin.auth, payload: { name: 'A' } }))
          .statusCode,
        200,
      );
      await unassign(owner, admin.id, org.roles.admin);
      const res = await t.app.inject({
        method: 'PATCH',
        url: base(org),
        headers: admin.auth,
        payload: { name: 'B' },
      });
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.edit']);
    });
  });

  describe('DELETE members/:userId', () => {
    it('removes a member (204), firing member.removed, without touching their tokens', async () => {
      await assign(owner, member.id, org.roles.admin);
      const res = await remove(admin, member.id);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      const removed = (await eventRows(t, org.id)).filter((e) => e.type === 'member.removed');
      assert.equal(removed.length, 1);
      assert.equal(removed[0].data.user, member.id);
      assert.deepEqual([...(removed[0].data.removedRoles as string[])].sort(), ['Admin', 'Member']);
      assert.deepEqual(await rolesOf(member.id), []);
      assertError(await t.app.inject({ url: base(org), headers: member.auth }), 404, 'not_found');
      // The token still authenticates elsewhere.
      assert.equal(
        (await t.app.inject({ url: '/identity/organizations', headers: member.auth })).statusCode,
        200,
      );
      const audit = (await auditRows(t, org.id)).find((a) => a.action === 'member.removed')!;
      assert.equal(audit.resource_id, member.id);
      assert.equal(audit.actor_user_id, admin.id);
    });

    it('refuses to remove the Owner (422)', async () => {
      assertError(await remove(admin, owner.id), 422, 'unprocessable_entity');
      assertError(await remove(owner, owner.id), 422, 'unprocessable_entity');
      assert.deepEqual(await owners(), [owner.id]);
    });

    it('refuses to remove a member whose roles carry permissions the caller lacks', async () => {
      const powerful = await createRole(['org.delete']);
      await assign(owner, member.id, powerful.id);
      assert.deepEqual(assertError(await remove(admin, member.id), 403, 'forbidden').details.missing, [
        'org.delete',
      ]);
      assert.equal((await remove(owner, member.id)).statusCode, 204);
    });

    it('is 404 for a non-member and to outsiders; needs org.members.edit', async () => {
      assertError(await remove(owner, outsider.id), 404, 'not_found');
      assertError(await remove(outsider, member.id), 404, 'not_found');
      assertError(await remove(owner, outsider.id, otherOrg), 404, 'not_found');
      assert.deepEqual(assertError(await remove(member, admin.id), 403, 'forbidden').details.missing, [
        'org.members.edit',
      ]);
      assert.deepEqual(await rolesOf(admin.id), ['Admin']);
    });
  });

  describe('POST transfer-ownership', () => {
    it('makes the new owner Owner while the old one keeps Admin (200 with the member item)', async () => {
      const res = await transfer(owner, { newOwnerUserId: member.id });
      assert.equal(res.statusCode, 200, res.body);
      const item = json(res);
      assert.equal(item.userId, member.id);
      assert.deepEqual(
        item.roles.map((r: { name: string }) => r.name),
        ['Owner', 'Member'],
      );
      assert.deepEqual(await rolesOf(owner.id), ['Admin']);
      assert.deepEqual(await owners(), [member.id]);
      const events = (await eventRows(t, org.id)).filter((e) => e.type === 'member.role.changed');
      const byUser = (a: { user: unknown }, b: { user: unknown }) =>
        String(a.user).localeCompare(String(b.user));
      assert.deepEqual(
        events.map((e) => e.data as { user: string }).sort(byUser),
        [
          { user: owner.id, added: ['Admin'], removed: ['Owner'] },
          { user: member.id, added: ['Owner'], removed: [] },
        ].sort(byUser),
      );
      const audit = (await auditRows(t, org.id)).find((a) => a.action === 'org.ownership.transferred')!;
      assert.deepEqual(audit.metadata, { from: [owner.id], to: member.id });
      // The new Owner can now delete; the old one cannot.
      const del = await t.app.inject({ method: 'DELETE', url: base(org), headers: owner.auth });
      assert.deepEqual(assertError(del, 403, 'forbidden').details.missing, ['org.delete']);
    });

    it('is owner only (403 naming org.ownership.transfer)', async () => {
      const res = await transfer(admin, { newOwnerUserId: admin.id });
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.ownership.transfer']);
      assertError(await transfer(outsider, { newOwnerUserId: outsider.id }), 404, 'not_found');
      assert.deepEqual(await owners(), [owner.id]);
    });

    it('is Owner only even for a member given both owner permissions through a custom role', async () => {
      const seizing = await createRole(['org.ownership.transfer', 'org.delete']);
      assert.equal((await assign(owner, member.id, seizing.id)).statusCode, 201);
      const before = await recordCounts(t, org.id);
      const res = await transfer(member, { newOwnerUserId: member.id });
      assertError(res, 403, 'forbidden');
      const del = await t.app.inject({ method: 'DELETE', url: base(org), headers: member.auth });
      assertError(del, 403, 'forbidden');
      assert.deepEqual(await owners(), [owner.id]);
      assert.deepEqual(await recordCounts(t, org.id), before);
      const row = await t.ctx.db
        .selectFrom('orgs')
        .select('deleted_at')
        .where('id', '=', org.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.deleted_at, null);
    });

    it('needs the new owner to be a member (404) other than the current Owner (422)', async () => {
      assertError(await transfer(owner, { newOwnerUserId: outsider.id }), 404, 'not_found');
      assertError(await transfer(owner, { newOwnerUserId: 'usr_nobody' }), 404, 'not_found');
      assertError(await transfer(owner, { newOwnerUserId: owner.id }), 422, 'unprocessable_entity');
      assertFieldError(await transfer(owner, {}), 'newOwnerUserId', 'required');
      assertFieldError(await transfer(owner, { newOwnerUserId: 7 }), 'newOwnerUserId', 'invalid_type');
      assert.deepEqual(await owners(), [owner.id]);
    });

    it('leaves exactly one Owner after two concurrent transfers', async () => {
      const [a, b] = await Promise.all([
        transfer(owner, { newOwnerUserId: admin.id }),
        transfer(owner, { newOwnerUserId: member.id }),
      ]);
      const statuses = [a.statusCode, b.statusCode].sort();
      assert.deepEqual(statuses, [200, 403], `${a.body} ${b.body}`);
      const winner = a.statusCode === 200 ? admin : member;
      assert.deepEqual(await owners(), [winner.id]);
      assert.deepEqual(await rolesOf(owner.id), ['Admin']);
      const transfers = (await auditRows(t, org.id)).filter((x) => x.action === 'org.ownership.transferred');
      assert.equal(transfers.length, 1);
    });
  });
});
