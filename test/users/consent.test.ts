import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, type TestUser, buildTestApp, consoleToken, json } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { clientCredentialsToken, refresh, signInToApp } from './flow.js';

let t: TestApp;
let app: SeededClient;
let otherApp: SeededClient;

const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials'];

before(async () => {
  t = await buildTestApp();
  app = await seedClient(t, { confidential: true, grantTypes: GRANTS });
  otherApp = await seedClient(t, { confidential: true, grantTypes: GRANTS, orgId: app.orgId });
});
after(() => t.close());

async function signedInUser() {
  const session = await signInToApp(t, app, createTestWallet());
  const token = await consoleToken(t, session.userId);
  const user: TestUser = {
    id: session.userId,
    username: '',
    token,
    auth: { authorization: `Bearer ${token}` },
  };
  return { session, user };
}

async function revokedEvents(userId: string) {
  const rows = await t.ctx.db
    .selectFrom('events')
    .select(['type', 'data', 'org_id', 'actor_user_id'])
    .where('type', '=', 'consent.revoked')
    .execute();
  return rows.filter((r) => (r.data as unknown as { user: string }).user === userId);
}

describe('GET /users/me/consent-grants', () => {
  it('lists the grant records of the caller', async () => {
    const { user } = await signedInUser();
    const res = await t.app.inject({ method: 'GET', url: '/users/me/consent-grants', headers: user.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['ratelimit-limit'], '60');
    const { items } = json(res);
    assert.equal(items.length, 1);
    assert.deepEqual(Object.keys(items[0]).sort(), ['app', 'createdAt', 'id', 'scopes', 'updatedAt', 'user']);
    assert.equal(items[0].user, user.id);
    assert.equal(items[0].app, app.clientId);
    assert.deepEqual([...items[0].scopes].sort(), ['offline_access', 'openid', 'profile']);
  });
});

describe('DELETE /users/me/consent-grants/:appId', () => {
  it('revokes the grant (204), fires consent.revoked and revokes the refresh tokens it backs', async () => {
    const { user, session } = await signedInUser();
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/consent-grants/${app.clientId}`,
      headers: user.auth,
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(
      json(await t.app.inject({ method: 'GET', url: '/users/me/consent-grants', headers: user.auth })),
      {
        items: [],
      },
    );
    const events = await revokedEvents(user.id);
    assert.equal(events.length, 1);
    assert.equal(events[0].org_id, app.orgId);
    assert.equal(events[0].actor_user_id, user.id);
    assert.deepEqual((events[0].data as unknown as { app: string }).app, app.clientId);
    const refreshed = await refresh(t, app, session.refreshToken);
    assert.equal(refreshed.statusCode, 400);
    assert.equal(json(refreshed).error, 'invalid_grant');

    const again = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/consent-grants/${app.clientId}`,
      headers: user.auth,
    });
    assert.equal(again.statusCode, 404);
  });

  it('needs authentication', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: `/users/me/consent-grants/${app.clientId}` });
    assert.equal(res.statusCode, 401);
  });
});

describe('DELETE /users/:userId/consent-grants/:appId (the app revokes)', () => {
  const revokeAs = (userId: string, appId: string, authorization?: string) =>
    t.app.inject({
      method: 'DELETE',
      url: `/users/${userId}/consent-grants/${appId}`,
      headers: authorization ? { authorization } : {},
    });

  it("revokes with the app's own client-credentials token (204), actor null", async () => {
    const { user, session } = await signedInUser();
    const token = await clientCredentialsToken(t, app);
    const res = await revokeAs(user.id, app.clientId, `Bearer ${token}`);
    assert.equal(res.statusCode, 204, res.body);
    const events = await revokedEvents(user.id);
    assert.equal(events.length, 1);
    assert.equal(events[0].actor_user_id, null);
    assert.equal((await refresh(t, app, session.refreshToken)).statusCode, 400);
    assert.equal((await revokeAs(user.id, app.clientId, `Bearer ${token}`)).statusCode, 404);
  });

  it("refuses another app's token (403), a user's token or garbage (401) and no token (401)", async () => {
    const { user, session } = await signedInUser();
    const other = await clientCredentialsToken(t, otherApp);
    const forbidden = await revokeAs(user.id, app.clientId, `Bearer ${other}`);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(json(forbidden).error.code, 'forbidden');

    const userToken = await revokeAs(user.id, app.clientId, `Bearer ${session.accessToken}`);
    assert.equal(userToken.statusCode, 401);
    assert.equal(json(userToken).error.code, 'invalid_token');
    assert.equal((await revokeAs(user.id, app.clientId, user.auth.authorization)).statusCode, 401);
    assert.equal((await revokeAs(user.id, app.clientId, 'Bearer not.a.jwt')).statusCode, 401);
    const none = await revokeAs(user.id, app.clientId);
    assert.equal(none.statusCode, 401);
    assert.equal(json(none).error.code, 'unauthorized');

    // The grant is untouched.
    const grants = json(
      await t.app.inject({ method: 'GET', url: '/users/me/consent-grants', headers: user.auth }),
    );
    assert.equal(grants.items.length, 1);
  });

  it('refuses an expired app token', async () => {
    const { user } = await signedInUser();
    const token = await clientCredentialsToken(t, app);
    t.clock.advance(3601);
    const res = await revokeAs(user.id, app.clientId, `Bearer ${token}`);
    assert.equal(res.statusCode, 401);
  });
});
