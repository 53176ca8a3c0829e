import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { type TestApp, buildTestApp, cachesServing, consoleToken, json } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';
import { signInToApp } from '../users/flow.js';

/**
 * Two instances on one database (two pools on PostgreSQL, one embedded database on PGlite). Each
 * keeps the state of the tokens and users it saw in memory (src/oidc/user-cache.ts); B stands for an
 * instance in another process (`otherProcess`: it hears of changes only through the invalidation
 * channel). A token or user B has cached is changed through A; after `sync()` (everything committed
 * before it has reached B, no sleeping) B's very next request sees the change.
 */
describe('token and user state cached per instance, invalidated on every instance at once', () => {
  let a: TestApp;
  let b: TestApp;
  let client: SeededClient;

  before(async () => {
    const env = { RATE_LIMIT_MULTIPLIER: '1000' };
    a = await buildTestApp({ env });
    b = await buildTestApp({ env, shareWith: a });
    b.ctx.invalidation.otherProcess = true;
    // B listening, and no heartbeat on B: a slow round trip must not turn its caches off mid-test.
    await cachesServing(b);
    client = await seedClient(a, {
      confidential: true,
      scopes: ['openid', 'profile', 'wallet', 'offline_access'],
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  const userinfo = (t: TestApp, token: string) =>
    t.app.inject({ method: 'GET', url: '/userinfo', headers: { authorization: `Bearer ${token}` } });
  const onA = (method: 'DELETE' | 'PATCH' | 'POST', url: string, token: string, payload?: object) =>
    a.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload });

  /** A user signed in to the app on A, whose access token B has used (so B has it cached). */
  async function signedInAndCachedOnB(scope = 'openid profile offline_access') {
    const wallet = createTestWallet();
    const s = await signInToApp(a, client, wallet, {}, { scope });
    for (let i = 0; i < 2; i++) assert.equal((await userinfo(b, s.accessToken)).statusCode, 200);
    return { ...s, wallet, console: await consoleToken(a, s.userId) };
  }

  async function refusedOnB(token: string) {
    await b.ctx.invalidation.sync();
    const res = await userinfo(b, token);
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(json(res).error.code, 'invalid_token');
  }

  test('control: B serves what it cached until the change is announced', async () => {
    const s = await signedInAndCachedOnB();
    const { jti, exp } = decodeJwt(s.accessToken) as { jti: string; exp: number };
    // Written behind the app's back (no announcement): B keeps answering from memory.
    await a.ctx.db
      .insertInto('revoked_tokens')
      .values({ jti, expires_at: new Date(exp * 1000), revoked_at: a.clock.now() })
      .execute();
    await b.ctx.invalidation.sync();
    assert.equal((await userinfo(b, s.accessToken)).statusCode, 200, 'B answers from its cache');
    await a.ctx.invalidation.publish('token', [jti]);
    await refusedOnB(s.accessToken);
  });

  test('an access token revoked on A (POST /oauth2/revoke) is refused on B at once', async () => {
    const s = await signedInAndCachedOnB();
    const res = await a.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: s.accessToken,
        token_type_hint: 'access_token',
        client_id: client.clientId,
        client_secret: client.clientSecret ?? '',
      }).toString(),
    });
    assert.equal(res.statusCode, 200, res.body);
    await refusedOnB(s.accessToken);
  });

  test('a session ended on A (DELETE /users/me/sessions/:id) refuses its tokens on B at once', async () => {
    const s = await signedInAndCachedOnB();
    const sid = String(decodeJwt(s.idToken).sid);
    const res = await onA('DELETE', `/users/me/sessions/${sid}`, s.console);
    assert.equal(res.statusCode, 204, res.body);
    await refusedOnB(s.accessToken);
  });

  test('a consent revoked on A refuses the app’s tokens on B at once', async () => {
    const s = await signedInAndCachedOnB();
    const res = await onA('DELETE', `/users/me/consent-grants/${client.clientId}`, s.console);
    assert.equal(res.statusCode, 204, res.body);
    await refusedOnB(s.accessToken);
  });

  test('an account deleted on A: its tokens are refused on B at once, on /userinfo and the REST API', async () => {
    const s = await signedInAndCachedOnB();
    const rest = () =>
      b.app.inject({ method: 'GET', url: '/users/me', headers: { authorization: `Bearer ${s.console}` } });
    for (let i = 0; i < 2; i++) assert.equal((await rest()).statusCode, 200);
    const res = await onA('DELETE', '/users/me', s.console);
    assert.equal(res.statusCode, 204, res.body);
    await refusedOnB(s.accessToken);
    assert.equal((await rest()).statusCode, 401);
  });

  test('a profile changed on A shows on B’s /userinfo at once', async () => {
    const s = await signedInAndCachedOnB();
    assert.equal(json(await userinfo(b, s.accessToken)).given_name, undefined);
    const res = await onA('PATCH', `/users/${s.userId}`, s.console, { firstName: 'Grace' });
    assert.equal(res.statusCode, 200, res.body);
    await b.ctx.invalidation.sync();
    assert.equal(json(await userinfo(b, s.accessToken)).given_name, 'Grace');
  });

  test('a wallet linked and made primary on A shows in B’s wallet claims at once', async () => {
    const s = await signedInAndCachedOnB('openid wallet offline_access');
    const before = json(await userinfo(b, s.accessToken));
    assert.equal(before.wallets.length, 1);
    assert.equal(before.wallet_address, s.wallet.address);
    const second = await linkWallet(s.console, createTestWallet());
    await b.ctx.invalidation.sync();
    assert.equal(json(await userinfo(b, s.accessToken)).wallets.length, 2);
    const primary = await onA('PATCH', `/users/me/public-keys/${second.id}`, s.console, { isPrimary: true });
    assert.equal(primary.statusCode, 200, primary.body);
    await b.ctx.invalidation.sync();
    assert.equal(json(await userinfo(b, s.accessToken)).wallet_address, second.address);
  });

  async function linkWallet(token: string, wallet: TestWallet) {
    const challenge = await onA('POST', '/users/me/wallet-challenge', token, { address: wallet.address });
    assert.equal(challenge.statusCode, 200, challenge.body);
    const res = await onA('POST', '/users/me/public-keys', token, {
      blockchain: 'solana',
      ...wallet.prove(json(challenge).message),
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res) as { id: string; address: string };
  }

  test('while B’s channel is lost B reads through: a revocation it cannot hear is still refused', async () => {
    const c = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' }, shareWith: a });
    try {
      c.ctx.invalidation.otherProcess = true;
      const wallet = createTestWallet();
      const s = await signInToApp(a, client, wallet);
      for (let i = 0; i < 2; i++) assert.equal((await userinfo(c, s.accessToken)).statusCode, 200);
      c.ctx.invalidation.setHeartbeat({ intervalMs: 20, timeoutMs: 100, retryMs: 20 });
      // A half-open connection: no error, no notification; the heartbeat turns the caches off.
      const down = new Promise<void>((resolve) => {
        const off = c.ctx.invalidation.on('token', (key) => {
          if (key === '*' && !c.ctx.invalidation.healthy) {
            off();
            resolve();
          }
        });
      });
      c.ctx.invalidation.deaf = true;
      await down;
      // Served from the database, and not kept: the next request reads it again.
      assert.equal((await userinfo(c, s.accessToken)).statusCode, 200);
      const { jti, exp } = decodeJwt(s.accessToken) as { jti: string; exp: number };
      await a.ctx.db
        .insertInto('revoked_tokens')
        .values({ jti, expires_at: new Date(exp * 1000), revoked_at: a.clock.now() })
        .execute();
      assert.equal(c.ctx.invalidation.healthy, false);
      assert.equal((await userinfo(c, s.accessToken)).statusCode, 401, 'C read the database');
    } finally {
      await c.close();
    }
  });
});
