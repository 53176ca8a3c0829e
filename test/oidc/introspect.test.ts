import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import { grantConsent } from '../../src/oidc/consent.js';
import { registerIntrospector } from '../../src/oidc/introspect.js';
import { type TestApp, type TestUser, buildTestApp, createUser, json } from '../helpers/app.js';
import {
  type TestBrand,
  type TestClient,
  basicAuth,
  clientOf,
  createApp,
  createBrand,
  disableApp,
  form,
} from '../helpers/oidc.js';

let t: TestApp;
let brand: TestBrand;
let rp: TestClient;
let resourceServer: TestClient;
let user: TestUser;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  brand = await createBrand(t);
  rp = await createApp(t, brand);
  resourceServer = await createApp(t, brand, { grants: ['client_credentials'] });
  user = await createUser(t);
});
after(() => t.close());

async function tokensFor(c: TestClient, scopes = ['openid', 'offline_access', 'orders:read']) {
  const code = await issueAuthorizationCode(t.ctx, {
    client: await clientOf(t, c),
    userId: user.id,
    redirectUri: c.redirectUri,
    scopes,
    authTime: t.clock.nowSec(),
  });
  const f = form({
    grant_type: 'authorization_code',
    code,
    redirect_uri: c.redirectUri,
    client_id: c.clientId,
    client_secret: c.clientSecret,
  });
  const res = await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ access_token: string; refresh_token: string }>(res);
}

function introspect(c: TestClient, token: string | undefined, extra: Record<string, string> = {}) {
  const f = form({ token, client_id: c.clientId, client_secret: c.clientSecret, ...extra });
  return t.app.inject({ method: 'POST', url: '/oauth2/introspect', ...f });
}

describe('POST /oauth2/introspect', () => {
  test('an access token: active with scope, client_id, token_type, exp, iat, sub, iss, aud', async () => {
    const tokens = await tokensFor(rp);
    const res = await introspect(rp, tokens.access_token);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const now = t.clock.nowSec();
    assert.deepEqual(json(res), {
      active: true,
      scope: 'openid offline_access orders:read',
      client_id: rp.clientId,
      token_type: 'Bearer',
      exp: now + 3600,
      iat: now,
      sub: user.id,
      iss: t.ctx.config.issuer,
      aud: brand.slug,
    });
  });

  test('a refresh token: active with token_type refresh_token; inactive once used', async () => {
    const tokens = await tokensFor(rp);
    const body = json(await introspect(rp, tokens.refresh_token, { token_type_hint: 'refresh_token' }));
    assert.equal(body.active, true);
    assert.equal(body.token_type, 'refresh_token');
    assert.equal(body.client_id, rp.clientId);
    assert.equal(body.sub, user.id);
    assert.equal(body.aud, brand.slug);
    const f = form({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: rp.clientId,
      client_secret: rp.clientSecret,
    });
    await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
    assert.deepEqual(json(await introspect(rp, tokens.refresh_token)), { active: false });
  });

  test('inactive is exactly { active: false }: garbage, expired, revoked, disabled app', async () => {
    assert.deepEqual(json(await introspect(rp, 'garbage')), { active: false });
    assert.deepEqual(json(await introspect(rp, 'eyJhbGciOiJub25lIn0.e30.')), { active: false });

    const tokens = await tokensFor(rp);
    t.clock.advance(3600);
    assert.deepEqual(json(await introspect(rp, tokens.access_token)), { active: false });

    const fresh = await tokensFor(rp);
    const rf = form({ token: fresh.access_token, client_id: rp.clientId, client_secret: rp.clientSecret });
    await t.app.inject({ method: 'POST', url: '/oauth2/revoke', ...rf });
    assert.deepEqual(json(await introspect(rp, fresh.access_token)), { active: false });

    const doomed = await createApp(t, brand);
    const d = await tokensFor(doomed);
    assert.equal(json(await introspect(rp, d.access_token)).active, true);
    await disableApp(t, doomed);
    assert.deepEqual(json(await introspect(rp, d.access_token)), { active: false });
  });

  test('a resource server of the same brand may introspect; another brand sees inactive', async () => {
    const tokens = await tokensFor(rp);
    assert.equal(json(await introspect(resourceServer, tokens.access_token)).active, true);
    assert.equal(json(await introspect(resourceServer, tokens.refresh_token)).active, true);
    const foreignBrand = await createBrand(t);
    const foreign = await createApp(t, foreignBrand);
    assert.deepEqual(json(await introspect(foreign, tokens.access_token)), { active: false });
    assert.deepEqual(json(await introspect(foreign, tokens.refresh_token)), { active: false });
  });

  test('client-credentials tokens introspect with the client as sub', async () => {
    const f = form({
      grant_type: 'client_credentials',
      scope: 'orders:read',
      client_id: resourceServer.clientId,
      client_secret: resourceServer.clientSecret,
    });
    const cc = json(await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f }));
    const body = json(await introspect(rp, cc.access_token));
    assert.equal(body.active, true);
    assert.equal(body.sub, resourceServer.clientId);
    assert.equal(body.scope, 'orders:read');
  });

  test('opaque tokens of registered introspectors (user API keys) are answered by them, to apps the user consented to', async () => {
    registerIntrospector(t.ctx, async (token) =>
      token === 'ghsk_test-key'
        ? { active: true, scope: 'profile', token_type: 'api_key', sub: user.id }
        : null,
    );
    // Only an app the key's user consented to sees it active.
    assert.deepEqual(json(await introspect(rp, 'ghsk_test-key')), { active: false });
    const rpClient = await clientOf(t, rp);
    await t.ctx.db.transaction().execute((trx) =>
      grantConsent(t.ctx, trx, {
        user: { id: user.id },
        app: { appId: rpClient.appId, clientId: rpClient.clientId, orgId: rpClient.orgId },
        scopes: ['openid'],
      }),
    );
    assert.deepEqual(json(await introspect(resourceServer, 'ghsk_test-key')), { active: false });
    assert.deepEqual(json(await introspect(rp, 'ghsk_test-key')), {
      active: true,
      scope: 'profile',
      token_type: 'api_key',
      sub: user.id,
    });
    assert.deepEqual(json(await introspect(rp, 'ghsk_unknown')), { active: false });
  });

  test('client authentication: wrong secret 401 invalid_client (Basic challenge), missing token invalid_request', async () => {
    const tokens = await tokensFor(rp);
    const bad = await introspect({ ...rp, clientSecret: 'wrong' }, tokens.access_token);
    assert.equal(bad.statusCode, 401);
    assert.equal(json(bad).error, 'invalid_client');
    const f = form({ token: tokens.access_token });
    const basic = await t.app.inject({
      method: 'POST',
      url: '/oauth2/introspect',
      headers: { ...f.headers, ...basicAuth(rp.clientId, 'wrong') },
      payload: f.payload,
    });
    assert.equal(basic.statusCode, 401);
    assert.match(String(basic.headers['www-authenticate']), /^Basic/);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/oauth2/introspect',
      headers: { ...f.headers, ...basicAuth(rp.clientId, rp.clientSecret) },
      payload: f.payload,
    });
    assert.equal(json(ok).active, true);
    const missing = await introspect(rp, undefined);
    assert.equal(missing.statusCode, 400);
    assert.equal(json(missing).error, 'invalid_request');
  });

  test('public clients may not introspect (RFC 7662 §2.1): 401 invalid_client, console included', async () => {
    const tokens = await tokensFor(rp);
    const pub = await createApp(t, brand, { confidential: false });
    for (const clientId of [pub.clientId, 'console']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth2/introspect',
        ...form({ token: tokens.access_token, client_id: clientId }),
      });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json(res).error, 'invalid_client');
      assert.ok(!res.body.includes(user.id));
    }
  });

  test('console tokens are inactive to every app outside the console brand', async () => {
    const { consoleToken } = await import('../helpers/app.js');
    const token = await consoleToken(t, user.id);
    assert.deepEqual(json(await introspect(rp, token)), { active: false });
    assert.deepEqual(json(await introspect(resourceServer, token)), { active: false });
  });

  test('rate limit: 60 per minute per client', async () => {
    const t2 = await buildTestApp();
    try {
      const c2 = await createApp(t2, await createBrand(t2));
      const call = () => {
        const f = form({ token: 'x', client_id: c2.clientId, client_secret: c2.clientSecret });
        return t2.app.inject({ method: 'POST', url: '/oauth2/introspect', ...f });
      };
      for (let i = 0; i < 60; i++) assert.equal((await call()).statusCode, 200);
      const res = await call();
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).error, 'rate_limited');
      assert.ok(res.headers['retry-after']);
    } finally {
      await t2.close();
    }
  });
});
