import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/lib/hash.js';
import { type TestApp, type TestUser, buildTestApp, consoleToken, createUser, json } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';

let t: TestApp;
let alice: TestUser;
let org: TestOrg;

before(async () => {
  // Many keys are created here; the 10-per-hour limit has its own app below.
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
  alice = await createUser(t);
  org = await seedOrg(t, alice);
});
after(() => t.close());

/** The tests move the clock by hours: each call signs in again (a fresh console token). */
async function signedIn(user: TestUser) {
  user.auth = { authorization: `Bearer ${await consoleToken(t, user.id)}` };
  return user.auth;
}
async function create(user: TestUser, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/users/me/api-keys', headers: await signedIn(user), payload });
}
async function newKey(user: TestUser, payload: Record<string, unknown> = {}) {
  const res = await create(user, { name: 'test key', ...payload });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}
const withKey = (key: string, extra: Record<string, unknown> = {}) => ({
  headers: { authorization: `Bearer ${key}` },
  ...extra,
});

describe('POST /users/me/api-keys', () => {
  it('returns the key once, with its 8-character prefix, and stores only its SHA-256', async () => {
    const created = await newKey(alice, { name: 'ci', scopes: ['org.read', 'users:read'] });
    assert.match(created.key, /^ghsk_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.prefix, created.key.slice(0, 8));
    assert.equal(created.type, 'standard');
    assert.deepEqual(created.scopes, ['org.read', 'users:read']);
    assert.deepEqual(created.ipAllowlist, []);
    assert.equal(created.expiresAt, undefined);
    const row = await t.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256(created.key));
    assert.ok(!JSON.stringify(row).includes(created.key));

    const list = await t.app.inject({ method: 'GET', url: '/users/me/api-keys', headers: alice.auth });
    assert.equal(list.statusCode, 200);
    const item = json(list).items.find((k: { id: string }) => k.id === created.id);
    assert.equal(item.key, undefined);
    assert.equal(item.prefix, created.prefix);
    assert.ok(!list.body.includes(created.key));
  });

  it('accepts the PascalCase permission names and stores them dotted', async () => {
    const created = await newKey(alice, {
      scopes: ['IdentityOrgPermission.MembersView', 'AdminPermission.UsersView'],
    });
    assert.deepEqual(created.scopes, ['org.members.view', 'admin.users.view']);
  });

  it('answers 400 validation_failed for each invalid field', async () => {
    const future = new Date(t.clock.nowMs() + 86_400_000).toISOString();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(81) }, 'name'],
      [{ name: 'k', type: 'forever' }, 'type'],
      [{ name: 'k', scopes: ['root'] }, 'scopes.0'],
      [{ name: 'k', scopes: 'org.read' }, 'scopes'],
      [{ name: 'k', expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ name: 'k', expiresAt: new Date(t.clock.nowMs() - 1000).toISOString() }, 'expiresAt'],
      [{ name: 'k', type: 'ephemeral', expiresAt: future }, 'expiresAt'],
      [{ name: 'k', ipAllowlist: ['10.0.0.0/33'] }, 'ipAllowlist.0'],
      [{ name: 'k', ipAllowlist: ['not-an-ip'] }, 'ipAllowlist.0'],
      [{ name: 'k', ipAllowlist: ['10.0.0.1', 'fe80::/129'] }, 'ipAllowlist.1'],
      [{ name: 'k', key: 'ghsk_chosen' }, 'key'],
    ];
    for (const [payload, field] of cases) {
      const res = await create(alice, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(json(res).error.code, 'validation_failed');
      assert.ok(
        json(res).error.details.fields.some((f: { field: string }) => f.field === field),
        `${JSON.stringify(payload)} → ${res.body}`,
      );
    }
  });

  it('gives an ephemeral key one hour by default and refuses it after that', async () => {
    const created = await newKey(alice, { type: 'ephemeral' });
    assert.equal(created.expiresAt, new Date(t.clock.nowMs() + 3600_000).toISOString());
    const ok = await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) });
    assert.equal(ok.statusCode, 200);
    t.clock.advance(3600);
    const late = await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) });
    assert.equal(late.statusCode, 401);
    assert.equal(json(late).error.code, 'invalid_token');
  });

  it('refuses a standard key after its expiresAt', async () => {
    const created = await newKey(alice, { expiresAt: new Date(t.clock.nowMs() + 120_000).toISOString() });
    t.clock.advance(119);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) })).statusCode,
      200,
    );
    t.clock.advance(1);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) })).statusCode,
      401,
    );
  });

  it('is limited to 10 keys per hour per user', async () => {
    const limited = await buildTestApp();
    try {
      const bob = await createUser(limited);
      const carol = await createUser(limited);
      const post = (u: TestUser, name: string) =>
        limited.app.inject({ method: 'POST', url: '/users/me/api-keys', headers: u.auth, payload: { name } });
      for (let i = 0; i < 10; i++) {
        const res = await post(bob, `k${i}`);
        assert.equal(res.statusCode, 201);
        assert.equal(res.headers['ratelimit-limit'], '10');
        assert.equal(res.headers['ratelimit-remaining'], String(9 - i));
      }
      const res = await post(bob, 'one too many');
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).error.code, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) > 0);
      assert.equal((await post(carol, 'other user')).statusCode, 201, 'the limit is per user');
    } finally {
      await limited.close();
    }
  });

  it('cannot be created, nor revoked, with an API key', async () => {
    const created = await newKey(alice);
    const res = await t.app.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      ...withKey(created.key, { payload: { name: 'child' } }),
    });
    assert.equal(res.statusCode, 403);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/api-keys/${created.id}`,
      ...withKey(created.key),
    });
    assert.equal(del.statusCode, 403);
  });

  it('requires authentication', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/users/me/api-keys', payload: { name: 'x' } });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'unauthorized');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/users/me/api-keys',
      ...withKey('ghsk_not-a-real-key'),
    });
    assert.equal(bad.statusCode, 401);
    assert.equal(json(bad).error.code, 'invalid_token');
  });
});

describe('using a key', () => {
  it('works as a Bearer token and records lastUsedAt', async () => {
    const created = await newKey(alice);
    const res = await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) });
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).id, alice.id);
    const list = json(await t.app.inject({ method: 'GET', url: '/users/me/api-keys', headers: alice.auth }));
    const item = list.items.find((k: { id: string }) => k.id === created.id);
    assert.equal(item.lastUsedAt, t.clock.now().toISOString());
  });

  it('is refused at once after DELETE, which answers 200 with revokedAt set', async () => {
    const created = await newKey(alice);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) })).statusCode,
      200,
    );
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/api-keys/${created.id}`,
      headers: alice.auth,
    });
    assert.equal(del.statusCode, 200);
    assert.equal(json(del).revokedAt, t.clock.now().toISOString());
    assert.equal(json(del).key, undefined);
    const res = await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'invalid_token');
    t.clock.advance(10);
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/api-keys/${created.id}`,
      headers: alice.auth,
    });
    assert.equal(json(again).revokedAt, json(del).revokedAt, 'revoking twice keeps the first time');
  });

  it("answers 404 for another user's key, which stays usable", async () => {
    const bob = await createUser(t);
    const created = await newKey(bob);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/api-keys/${created.id}`,
      headers: alice.auth,
    });
    assert.equal(del.statusCode, 404);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(created.key) })).statusCode,
      200,
    );
  });

  it('is accepted only from its allowlisted addresses (IPv4 and IPv6)', async () => {
    const created = await newKey(alice, { ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'] });
    assert.deepEqual(created.ipAllowlist, ['203.0.113.0/24', '2001:db8::/32']);
    const from = (remoteAddress: string) =>
      t.app.inject({ method: 'GET', url: '/users/me', remoteAddress, ...withKey(created.key) });
    assert.equal((await from('203.0.113.77')).statusCode, 200);
    assert.equal((await from('::ffff:203.0.113.8')).statusCode, 200);
    assert.equal((await from('2001:db8:1::5')).statusCode, 200);
    const outside = await from('198.51.100.1');
    assert.equal(outside.statusCode, 401);
    assert.equal(json(outside).error.code, 'invalid_token');
    assert.equal((await from('2001:db9::1')).statusCode, 401);
  });

  it('is held to its scopes on org routes and on /users routes', async () => {
    const reader = await newKey(alice, { scopes: ['users:read'] });
    const orgRes = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations/${org.slug}`,
      ...withKey(reader.key),
    });
    assert.equal(orgRes.statusCode, 403);
    assert.deepEqual(json(orgRes).error.details.missing, ['org.read']);

    const orgReader = await newKey(alice, { scopes: ['org.read'] });
    const ok = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations/${org.slug}`,
      ...withKey(orgReader.key),
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const me = await t.app.inject({ method: 'GET', url: '/users/me', ...withKey(orgReader.key) });
    assert.equal(me.statusCode, 403);
    assert.deepEqual(json(me).error.details.missing, ['users:read']);

    const full = await newKey(alice);
    assert.equal(
      (
        await t.app.inject({
          method: 'GET',
          url: `/identity/organizations/${org.slug}`,
          ...withKey(full.key),
        })
      ).statusCode,
      200,
    );
  });

  it("does not widen the user's own permissions", async () => {
    const member = await createUser(t);
    await addMember(t, org, member, 'member');
    const created = await newKey(member, { scopes: ['org.members.edit'] });
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/roles`,
      ...withKey(created.key, { payload: { name: 'x', permissions: [] } }),
    });
    assert.equal(res.statusCode, 403);
  });
});

describe('introspection of a key', () => {
  let client: SeededClient;
  before(async () => {
    client = await seedClient(t, { confidential: true });
  });
  const introspect = (token: string, c: SeededClient = client, remoteAddress = '127.0.0.1') =>
    t.app.inject({
      method: 'POST',
      url: '/oauth2/introspect',
      remoteAddress,
      payload: new URLSearchParams({
        token,
        client_id: c.clientId,
        ...(c.clientSecret ? { client_secret: c.clientSecret } : {}),
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  /** The key's user grants the app consent (as the consent screen would record it). */
  const consentTo = (user: TestUser, c: SeededClient) =>
    t.ctx.db
      .insertInto('consent_grants')
      .values({
        id: `cg_${c.appId}_${user.id}`.slice(0, 60),
        user_id: user.id,
        app_id: c.appId,
        client_id: c.clientId,
        org_id: c.orgId,
        scopes: ['openid'],
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();

  it('is active with the key scopes, subject and times to an app the key user consented to, and inactive once revoked', async () => {
    await consentTo(alice, client);
    const expiresAt = new Date(t.clock.nowMs() + 3_600_000);
    const created = await newKey(alice, {
      scopes: ['users:read', 'org.read'],
      expiresAt: expiresAt.toISOString(),
    });
    const res = await introspect(created.key);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), {
      active: true,
      scope: 'users:read org.read',
      token_type: 'api_key',
      sub: alice.id,
      iat: t.clock.nowSec(),
      exp: Math.floor(expiresAt.getTime() / 1000),
    });
    await t.app.inject({ method: 'DELETE', url: `/users/me/api-keys/${created.id}`, headers: alice.auth });
    assert.deepEqual(json(await introspect(created.key)), { active: false });
    assert.deepEqual(json(await introspect('ghsk_unknown')), { active: false });
  });

  it('is { active: false } to a confidential app the key user never consented to', async () => {
    const stranger = await seedClient(t, { confidential: true });
    const created = await newKey(alice, { scopes: ['users:read'] });
    const res = await introspect(created.key, stranger);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { active: false });
  });

  it('is refused to public clients, console included (401 invalid_client: RFC 7662 §2.1)', async () => {
    const created = await newKey(alice, { scopes: ['users:read'] });
    const pub = await seedClient(t, { confidential: false });
    await consentTo(alice, pub);
    for (const c of [pub, { ...pub, clientId: 'console' }]) {
      const res = await introspect(created.key, c);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json(res).error, 'invalid_client');
      assert.ok(!res.body.includes(alice.id));
    }
  });

  it('a key with an IP allowlist is active only when introspected from an allowed address', async () => {
    const created = await newKey(alice, { scopes: ['users:read'], ipAllowlist: ['203.0.113.0/24'] });
    assert.equal(json(await introspect(created.key, client, '203.0.113.9')).active, true);
    assert.deepEqual(json(await introspect(created.key, client, '198.51.100.7')), { active: false });
  });
});
