import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, UnsecuredJWT } from 'jose';
import { authenticate, principalOf } from '../../src/http/auth.js';
import { normalizePermission } from '../../src/http/permissions.js';
import { orgGuards, requireSystemPermission } from '../../src/modules/orgs/org.guards.js';
import { signJwt } from '../../src/oidc/jwt.js';
import {
  buildTestApp,
  consoleToken,
  createUser,
  grantSystem,
  json,
  type TestApp,
  type TestUser,
  userChangedBehindTheApp,
} from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';

describe('bearer authentication and permissions', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: TestOrg;

  before(async () => {
    t = await buildTestApp({
      routes(app) {
        const ctx = app.ctx;
        const requirePermission = orgGuards(ctx);
        const adminPermission = orgGuards(ctx, { admin: true });
        app.get(
          '/test/me',
          { preHandler: authenticate(ctx), config: { apiKeyScope: ['users:read'] } },
          async (req) => ({
            userId: principalOf(req).userId,
          }),
        );
        app.get(
          '/test/orgs/:orgSlug/apps',
          { preHandler: [authenticate(ctx), requirePermission('org.apps.view')] },
          async (req) => ({ org: req.org.slug }),
        );
        app.post(
          '/test/orgs/:orgSlug/apps',
          { preHandler: [authenticate(ctx), requirePermission('org.apps.edit')] },
          async (req) => ({ org: req.org.slug }),
        );
        app.get(
          '/test/admin/orgs/:orgSlug/apps',
          { preHandler: [authenticate(ctx), adminPermission('org.apps.view')] },
          async (req) => ({ org: req.org.slug }),
        );
        app.get(
          '/test/admin/users',
          { preHandler: [authenticate(ctx), requireSystemPermission(ctx, 'admin.users.view')] },
          async () => ({ ok: true }),
        );
      },
    });
    owner = await createUser(t);
    member = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    await addMember(t, org, member, 'member');
  });
  after(() => t.close());

  it('accepts a console access token', async () => {
    const res = await t.app.inject({ url: '/test/me', headers: owner.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).userId, owner.id);
  });

  it('answers 401 unauthorized without credentials', async () => {
    const res = await t.app.inject('/test/me');
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'unauthorized');
  });

  it('answers 401 unauthorized for a non-Bearer scheme', async () => {
    const res = await t.app.inject({ url: '/test/me', headers: { authorization: 'Basic abc' } });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'unauthorized');
  });

  const invalid = async (token: string) => {
    const res = await t.app.inject({ url: '/test/me', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'invalid_token');
    assert.match(res.headers['www-authenticate'] as string, /invalid_token/);
  };

  it('refuses garbage', () => invalid('not-a-jwt'));

  it('refuses a token for another audience', async () => {
    await invalid(await consoleToken(t, owner.id, { aud: 'shop' }));
  });

  it('refuses a token from another issuer', async () => {
    await invalid(await consoleToken(t, owner.id, { iss: 'https://evil.example' }));
  });

  it('refuses an expired token', async () => {
    const token = await consoleToken(t, owner.id);
    t.clock.advance(3601);
    try {
      await invalid(token);
    } finally {
      t.clock.advance(-3601);
    }
  });

  it('refuses alg none', async () => {
    const token = new UnsecuredJWT({ sub: owner.id, aud: 'console', client_id: 'console' })
      .setIssuer(t.ctx.config.issuer)
      .setExpirationTime('1h')
      .encode();
    await invalid(token);
  });

  it('refuses HS256 signed with the public key', async () => {
    const jwks = json((await t.app.inject('/.well-known/jwks.json')) as never);
    const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
    const token = await new SignJWT({ sub: owner.id, aud: 'console', client_id: 'console' })
      .setProtectedHeader({ alg: 'HS256', kid: jwks.keys[0].kid, typ: 'at+jwt' })
      .setIssuer(t.ctx.config.issuer)
      .setIssuedAt(t.clock.nowSec())
      .setExpirationTime(t.clock.nowSec() + 3600)
      .sign(secret);
    await invalid(token);
  });

  it('refuses an ID token (typ JWT) used as an access token', async () => {
    const idToken = await signJwt(
      t.ctx.keys,
      t.clock,
      { iss: t.ctx.config.issuer, sub: owner.id, aud: 'console', client_id: 'console' },
      { ttl: 3600 },
    );
    await invalid(idToken);
  });

  it('refuses a token whose user was deleted', async () => {
    const gone = await createUser(t);
    await t.ctx.db
      .updateTable('users')
      .set({ deleted_at: t.clock.now() })
      .where('id', '=', gone.id)
      .execute();
    await userChangedBehindTheApp(t, gone.id);
    await invalid(gone.token);
  });

  it('refuses an API key when no verifier accepts it', () => invalid('ghsk_abcdef'));

  it('lets a member with the permission through', async () => {
    const res = await t.app.inject({ url: `/test/orgs/${org.slug}/apps`, headers: member.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).org, org.slug);
  });

  it('answers 403 forbidden with details.missing when the role lacks the permission', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/test/orgs/${org.slug}/apps`,
      headers: member.auth,
    });
    assert.equal(res.statusCode, 403);
    const body = json(res);
    assert.equal(body.error.code, 'forbidden');
    assert.deepEqual(body.error.details.missing, ['org.apps.edit']);
  });

  it('hides an org from non-members with 404', async () => {
    const res = await t.app.inject({ url: `/test/orgs/${org.slug}/apps`, headers: outsider.auth });
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).error.code, 'not_found');
    const missing = await t.app.inject({ url: '/test/orgs/no-such-org/apps', headers: outsider.auth });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.body, res.body.replace(org.slug, 'no-such-org'));
  });

  it('reads permissions live: a removed member loses access at once', async () => {
    const temp = await createUser(t);
    await addMember(t, org, temp, 'admin');
    assert.equal(
      (await t.app.inject({ method: 'POST', url: `/test/orgs/${org.slug}/apps`, headers: temp.auth }))
        .statusCode,
      200,
    );
    await t.ctx.db.deleteFrom('org_members').where('user_id', '=', temp.id).execute();
    assert.equal(
      (await t.app.inject({ method: 'POST', url: `/test/orgs/${org.slug}/apps`, headers: temp.auth }))
        .statusCode,
      404,
    );
  });

  it('admin mirror needs the system permission, not membership', async () => {
    const staff = await createUser(t);
    const denied = await t.app.inject({ url: `/test/admin/orgs/${org.slug}/apps`, headers: staff.auth });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(json(denied).error.details.missing, ['admin.orgs.view']);
    await grantSystem(t, staff.id, ['admin.orgs.view']);
    const ok = await t.app.inject({ url: `/test/admin/orgs/${org.slug}/apps`, headers: staff.auth });
    assert.equal(ok.statusCode, 200);
    const users = await t.app.inject({ url: '/test/admin/users', headers: staff.auth });
    assert.equal(users.statusCode, 403);
    assert.deepEqual(json(users).error.details.missing, ['admin.users.view']);
  });

  it('system permissions also need an API key scope that allows them', async () => {
    const staff = await createUser(t);
    await grantSystem(t, staff.id, ['admin.users.view', 'admin.orgs.view']);
    const created = await t.app.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      headers: staff.auth,
      payload: { name: 'read only', scopes: ['users:read'] },
    });
    assert.equal(created.statusCode, 201);
    const key = { authorization: `Bearer ${json(created).key}` };
    const users = await t.app.inject({ url: '/test/admin/users', headers: key });
    assert.equal(users.statusCode, 403);
    assert.deepEqual(json(users).error.details.missing, ['admin.users.view']);
    const orgs = await t.app.inject({ url: `/test/admin/orgs/${org.slug}/apps`, headers: key });
    assert.equal(orgs.statusCode, 403);

    const wide = await t.app.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      headers: staff.auth,
      payload: { name: 'lookups', scopes: ['admin.users.view'] },
    });
    const ok = await t.app.inject({
      url: '/test/admin/users',
      headers: { authorization: `Bearer ${json(wide).key}` },
    });
    assert.equal(ok.statusCode, 200);
  });

  it('normalises both permission name forms', () => {
    assert.equal(normalizePermission('IdentityOrgPermission.MembersView'), 'org.members.view');
    assert.equal(normalizePermission('IdentityOrgPermission.TokenGatesEdit'), 'org.tokenGates.edit');
    assert.equal(normalizePermission('IdentityOrgPermission.WebhooksView'), 'org.webhooks.view');
    assert.equal(normalizePermission('IdentityOrgPermission.OwnershipTransfer'), 'org.ownership.transfer');
    assert.equal(normalizePermission('AdminPermission.OrgsView'), 'admin.orgs.view');
    assert.equal(normalizePermission('AdminPermission.OrgsEdit'), 'admin.orgs.edit');
    assert.equal(normalizePermission('AdminPermission.UsersView'), 'admin.users.view');
    assert.equal(normalizePermission('org.scopes.edit'), 'org.scopes.edit');
    assert.equal(normalizePermission('org.everything'), null);
    assert.equal(normalizePermission('IdentityOrgPermission.Nope'), null);
  });
});
