import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sha256 } from '../../src/lib/hash.js';
import { consoleToken, createUser, grantSystem, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import {
  assertError,
  assertFieldError,
  auditRows,
  buildOrgsTestApp,
  eventRows,
  recordCounts,
} from './helpers.js';

describe('org invitations', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let invitee: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;

  before(async () => {
    t = await buildOrgsTestApp();
    outsider = await createUser(t);
    otherOrg = await seedOrg(t, outsider);
  });
  after(() => t.close());

  beforeEach(async () => {
    owner = await createUser(t);
    admin = await createUser(t);
    member = await createUser(t);
    invitee = await createUser(t);
    org = await seedOrg(t, owner);
    await addMember(t, org, admin, 'admin');
    await addMember(t, org, member, 'member');
  });

  const base = (o: TestOrg) => `/identity/organizations/${o.slug}/invitations`;
  const invite = (user: TestUser, payload: unknown, o = org) =>
    t.app.inject({ method: 'POST', url: base(o), headers: user.auth, payload: payload as object });
  const list = (user: TestUser, o = org, qs = '') =>
    t.app.inject({ url: `${base(o)}${qs}`, headers: user.auth });
  const revoke = (user: TestUser, id: string, o = org) =>
    t.app.inject({ method: 'DELETE', url: `${base(o)}/${id}`, headers: user.auth });
  const accept = (user: TestUser, token: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/identity/invitations/accept',
      headers: user.auth,
      payload: { token } as object,
    });
  const tokenOf = (url: string) => decodeURIComponent(new URL(url).hash.replace(/^#token=/, ''));
  const rolesOf = async (user: TestUser) => {
    const res = await t.app.inject({
      url: `/identity/organizations/${org.slug}/members`,
      headers: owner.auth,
    });
    return json(res)
      .items.find((m: any) => m.userId === user.id)
      ?.roles.map((r: any) => r.name);
  };

  it('an admin creates a single-use link into the console; only its hash is stored; audited as member.invited', async () => {
    const res = await invite(admin, { roleIds: [org.roles.member], expiresInDays: 3 });
    assert.equal(res.statusCode, 201, res.body);
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), ['expiresAt', 'id', 'url']);
    assert.match(body.url, /^http:\/\/gatehouse\.test\/console\/invitations\/accept#token=ghinv_/);
    assert.equal(new Date(body.expiresAt).getTime() - t.clock.now().getTime(), 3 * 86_400_000);
    const token = tokenOf(body.url);
    const row = await t.ctx.db
      .selectFrom('org_invitations')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.token_hash, sha256(token));
    assert.ok(!JSON.stringify(row).includes(token), 'the token itself is never stored');
    const audit = (await auditRows(t, org.id)).at(-1)!;
    assert.equal(audit.action, 'member.invited');
    assert.equal(audit.resource_id, body.id);
    assert.ok(!JSON.stringify(audit).includes(token));
    const event = (await eventRows(t, org.id)).at(-1)!;
    assert.equal(event.type, 'member.invited');
    assert.ok(!JSON.stringify(event).includes(token));
  });

  it('defaults to 7 days; the list shows it pending with its roles', async () => {
    const created = json(await invite(owner, { roleIds: [org.roles.member, org.roles.admin] }));
    assert.equal(new Date(created.expiresAt).getTime() - t.clock.now().getTime(), 7 * 86_400_000);
    const res = await list(member);
    assert.equal(res.statusCode, 200, res.body);
    const [item] = json(res).items;
    assert.equal(item.id, created.id);
    assert.equal(item.status, 'pending');
    assert.equal(item.createdBy, owner.id);
    assert.deepEqual(item.roles.map((r: any) => r.name).sort(), ['Admin', 'Member']);
    assert.ok(!('url' in item) && !('token' in item));
  });

  it('the invitee accepts, becomes a member with the roles (member.added); the link works once', async () => {
    const { url, id } = json(await invite(admin, { roleIds: [org.roles.member] }));
    const before = await recordCounts(t, org.id);
    t.clock.advance(1);
    const res = await accept(invitee, tokenOf(url));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res).org, { id: org.id, slug: org.slug, name: org.slug });
    assert.deepEqual(await rolesOf(invitee), ['Member']);
    const after = await recordCounts(t, org.id);
    assert.deepEqual(after, { audit: before.audit + 1, events: before.events + 1 });
    const event = (await eventRows(t, org.id)).at(-1)!;
    assert.equal(event.type, 'member.added');
    assert.deepEqual((event.data as any).user, invitee.id);
    const again = await accept(outsider, tokenOf(url));
    assertError(again, 409, 'conflict');
    const [item] = json(await list(owner)).items;
    assert.equal(item.id, id);
    assert.equal(item.status, 'accepted');
    assert.equal(item.acceptedBy, invitee.id);
  });

  it("a removed admin's links stop working (404): they cannot let themselves back in", async () => {
    const { url } = json(await invite(admin, { roleIds: [org.roles.admin] }));
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/identity/organizations/${org.slug}/members/${admin.id}`,
      headers: owner.auth,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    assertError(await accept(admin, tokenOf(url)), 404, 'not_found');
    assertError(await accept(invitee, tokenOf(url)), 404, 'not_found');
    assert.equal(await rolesOf(admin), undefined);
    assert.equal(await rolesOf(invitee), undefined);
  });

  it("a demoted admin's links give nothing they can no longer give (404), and are not consumed", async () => {
    const { url } = json(await invite(admin, { roleIds: [org.roles.admin] }));
    const members = `/identity/organizations/${org.slug}/members/${admin.id}/roles`;
    const asMember = await t.app.inject({
      method: 'POST',
      url: members,
      headers: owner.auth,
      payload: { roleId: org.roles.member },
    });
    assert.equal(asMember.statusCode, 201, asMember.body);
    const demoted = await t.app.inject({
      method: 'DELETE',
      url: `${members}/${org.roles.admin}`,
      headers: owner.auth,
    });
    assert.equal(demoted.statusCode, 204, demoted.body);
    assertError(await accept(invitee, tokenOf(url)), 404, 'not_found');
    assert.equal(await rolesOf(invitee), undefined);
    // Given Admin again, the admin's link works again: it was refused, never burnt.
    await t.app.inject({
      method: 'POST',
      url: members,
      headers: owner.auth,
      payload: { roleId: org.roles.admin },
    });
    assert.equal((await accept(invitee, tokenOf(url))).statusCode, 200);
    assert.deepEqual(await rolesOf(invitee), ['Admin']);
  });

  it('a link made on the admin mirror stands while its maker keeps admin.orgs.edit', async () => {
    const operator = await createUser(t);
    await grantSystem(t, operator.id, ['admin.orgs.view', 'admin.orgs.edit']);
    const made = await t.app.inject({
      method: 'POST',
      url: `/admin/identity/organizations/${org.slug}/invitations`,
      headers: operator.auth,
      payload: { roleIds: [org.roles.admin] },
    });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal((await accept(invitee, tokenOf(json(made).url))).statusCode, 200);
    assert.deepEqual(await rolesOf(invitee), ['Admin']);
  });

  it('a member cannot accept again (409) and the link stays usable by someone else', async () => {
    const { url } = json(await invite(admin, { roleIds: [org.roles.member] }));
    assertError(await accept(member, tokenOf(url)), 409, 'conflict');
    assert.equal((await accept(invitee, tokenOf(url))).statusCode, 200);
  });

  it('a revoked link is refused (404); revoking is audited as member.invitation.revoked', async () => {
    const { url, id } = json(await invite(admin, { roleIds: [org.roles.member] }));
    t.clock.advance(1);
    const res = await revoke(admin, id);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await auditRows(t, org.id)).at(-1)!.action, 'member.invitation.revoked');
    assert.equal((await eventRows(t, org.id)).at(-1)!.type, 'member.invitation.revoked');
    assertError(await accept(invitee, tokenOf(url)), 404, 'not_found');
    assert.equal(await rolesOf(invitee), undefined);
    assert.equal(json(await list(owner, org, '?status=revoked')).items.length, 1);
    assert.equal(json(await list(owner, org, '?status=pending')).items.length, 0);
  });

  it('an expired link is refused (422) and not consumed', async () => {
    const { url, id } = json(await invite(admin, { roleIds: [org.roles.member], expiresInDays: 1 }));
    t.clock.advance(86_400);
    const fresh = { ...invitee, auth: { authorization: `Bearer ${await consoleToken(t, invitee.id)}` } };
    assertError(await accept(fresh, tokenOf(url)), 422, 'unprocessable_entity');
    const row = await t.ctx.db
      .selectFrom('org_invitations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.accepted_at, null);
    const freshOwner = { ...owner, auth: { authorization: `Bearer ${await consoleToken(t, owner.id)}` } };
    assert.equal(json(await list(freshOwner)).items[0].status, 'expired');
  });

  it('an unknown token is 404; no token is 400', async () => {
    assertError(await accept(invitee, 'ghinv_nope'), 404, 'not_found');
    assertFieldError(await accept(invitee, ''), 'token');
  });

  it('accepting needs a signed-in user', async () => {
    const { url } = json(await invite(admin, { roleIds: [org.roles.member] }));
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/invitations/accept',
      payload: { token: tokenOf(url) },
    });
    assertError(res, 401, 'unauthorized');
  });

  it('bad input is 400 validation_failed naming the field', async () => {
    assertFieldError(await invite(admin, { roleIds: [] }), 'roleIds');
    assertFieldError(await invite(admin, {}), 'roleIds');
    assertFieldError(await invite(admin, { roleIds: [org.roles.member], expiresInDays: 0 }), 'expiresInDays');
    assertFieldError(
      await invite(admin, { roleIds: [org.roles.member], expiresInDays: 31 }),
      'expiresInDays',
    );
    assertFieldError(await invite(admin, { roleIds: [org.roles.member], extra: 1 }), 'extra');
  });

  it('a member (no org.members.edit) is refused with 403 naming the permission; nothing is recorded', async () => {
    const before = await recordCounts(t, org.id);
    const err = assertError(await invite(member, { roleIds: [org.roles.member] }), 403, 'forbidden');
    assert.deepEqual(err.details.missing, ['org.members.edit']);
    const { id } = json(await invite(admin, { roleIds: [org.roles.member] }));
    assert.deepEqual(assertError(await revoke(member, id), 403, 'forbidden').details.missing, [
      'org.members.edit',
    ]);
    assert.equal((await recordCounts(t, org.id)).audit, before.audit + 1);
  });

  it('nobody invites into the Owner role (422), and an admin cannot give a role wider than theirs (403)', async () => {
    assertError(await invite(owner, { roleIds: [org.roles.owner] }), 422, 'unprocessable_entity');
    const wide = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/roles`,
      headers: owner.auth,
      payload: { name: 'Deleter', permissions: ['org.read', 'org.delete'] },
    });
    assert.equal(wide.statusCode, 201, wide.body);
    const err = assertError(await invite(admin, { roleIds: [json(wide).id] }), 403, 'forbidden');
    assert.deepEqual(err.details.missing, ['org.delete']);
  });

  it('only someone who could give its roles may revoke a link (403 naming the rest)', async () => {
    const inviter = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/roles`,
      headers: owner.auth,
      payload: { name: 'Inviter', permissions: ['org.read', 'org.members.view', 'org.members.edit'] },
    });
    assert.equal(inviter.statusCode, 201, inviter.body);
    const recruiter = await createUser(t);
    await addMember(t, org, recruiter, json(inviter).id);
    const adminLink = json(await invite(owner, { roleIds: [org.roles.admin] }));
    const err = assertError(await revoke(recruiter, adminLink.id), 403, 'forbidden');
    const adminRole = await t.ctx.db
      .selectFrom('roles')
      .select('permissions')
      .where('id', '=', org.roles.admin)
      .executeTakeFirstOrThrow();
    const held = ['org.read', 'org.members.view', 'org.members.edit'];
    assert.deepEqual(
      [...err.details.missing].sort(),
      adminRole.permissions.filter((p) => !held.includes(p)).sort(),
    );
    assert.equal(json(await list(owner)).items.find((i: any) => i.id === adminLink.id).status, 'pending');
    assert.equal((await revoke(admin, adminLink.id)).statusCode, 204, 'an admin holds what Admin gives');
  });

  it("another org's invitations and roles are 404", async () => {
    assertError(await list(owner, otherOrg), 404, 'not_found');
    assertError(await invite(owner, { roleIds: [org.roles.member] }, otherOrg), 404, 'not_found');
    assertError(await invite(owner, { roleIds: [otherOrg.roles.member] }), 404, 'not_found');
    const { id } = json(await invite(outsider, { roleIds: [otherOrg.roles.member] }, otherOrg));
    assertError(await revoke(owner, id), 404, 'not_found');
    assertError(await revoke(owner, id, otherOrg), 404, 'not_found');
    assertError(await revoke(owner, 'inv_unknown'), 404, 'not_found');
  });
});
