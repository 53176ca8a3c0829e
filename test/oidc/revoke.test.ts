import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import { revokeAllForUser, revokeTokensForGrant, sweepExpired } from '../../src/stores/revocations.store.js';
import { type TestApp, type TestUser, buildTestApp, consoleToken, createUser, json } from '../helpers/app.js';
import {
  type TestBrand,
  type TestClient,
  basicAuth,
  clientOf,
  createApp,
  createBrand,
  form,
} from '../helpers/oidc.js';

let t: TestApp;
let brand: TestBrand;
let rp: TestClient;
let user: TestUser;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  brand = await createBrand(t);
  rp = await createApp(t, brand);
  user = await createUser(t);
});
after(() => t.close());

async function tokensFor(c: TestClient, userId = user.id) {
  const code = await issueAuthorizationCode(t.ctx, {
    client: await clientOf(t, c),
    userId,
    redirectUri: c.redirectUri,
    scopes: ['openid', 'offline_access'],
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

function revoke(
  c: TestClient,
  fields: Record<string, string | undefined>,
  headers: Record<string, string> = {},
) {
  const f = form({ client_id: c.clientId, client_secret: c.clientSecret, ...fields });
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/revoke',
    headers: { ...f.headers, ...headers },
    payload: f.payload,
  });
}

const userinfo = async (token: string) =>
  (await t.app.inject({ method: 'GET', url: '/userinfo', headers: { authorization: `Bearer ${token}` } }))
    .statusCode;

function refresh(c: TestClient, rt: string) {
  const f = form({
    grant_type: 'refresh_token',
    refresh_token: rt,
    client_id: c.clientId,
    client_secret: c.clientSecret,
  });
  return t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
}

describe('POST /oauth2/revoke', () => {
  test('revoking an access token: 200 with an empty body, and the issuer refuses the token at once', async () => {
    const tokens = await tokensFor(rp);
    assert.equal(await userinfo(tokens.access_token), 200);
    const res = await revoke(rp, { token: tokens.access_token, token_type_hint: 'access_token' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(await userinfo(tokens.access_token), 401);
    // The refresh token of the same grant still works (RFC 7009 leaves that to the server).
    assert.equal((await refresh(rp, tokens.refresh_token)).statusCode, 200);
  });

  test('revoking a refresh token revokes its family and the family’s access tokens', async () => {
    const first = await tokensFor(rp);
    const second = json(await refresh(rp, first.refresh_token));
    const res = await revoke(rp, { token: second.refresh_token });
    assert.equal(res.statusCode, 200);
    assert.equal(json(await refresh(rp, second.refresh_token)).error, 'invalid_grant');
    assert.equal(await userinfo(first.access_token), 401);
    assert.equal(await userinfo(second.access_token), 401);
  });

  test('unknown, garbage and already revoked tokens: still 200', async () => {
    assert.equal((await revoke(rp, { token: 'garbage' })).statusCode, 200);
    assert.equal((await revoke(rp, { token: 'a.b.c', token_type_hint: 'refresh_token' })).statusCode, 200);
    const tokens = await tokensFor(rp);
    assert.equal((await revoke(rp, { token: tokens.refresh_token })).statusCode, 200);
    assert.equal((await revoke(rp, { token: tokens.refresh_token })).statusCode, 200);
  });

  test("another client's token: 200, and nothing happens", async () => {
    const other = await createApp(t, brand);
    const tokens = await tokensFor(rp);
    assert.equal((await revoke(other, { token: tokens.access_token })).statusCode, 200);
    assert.equal((await revoke(other, { token: tokens.refresh_token })).statusCode, 200);
    assert.equal(await userinfo(tokens.access_token), 200);
    assert.equal((await refresh(rp, tokens.refresh_token)).statusCode, 200);
  });

  test('client authentication is required: wrong secret 401 invalid_client, missing token invalid_request', async () => {
    const tokens = await tokensFor(rp);
    const bad = await revoke(rp, { token: tokens.access_token, client_secret: 'wrong' });
    assert.equal(bad.statusCode, 401);
    assert.equal(json(bad).error, 'invalid_client');
    assert.equal(await userinfo(tokens.access_token), 200);
    const f = form({ token: tokens.access_token });
    const basic = await t.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { ...f.headers, ...basicAuth(rp.clientId, 'wrong') },
      payload: f.payload,
    });
    assert.equal(basic.statusCode, 401);
    assert.match(String(basic.headers['www-authenticate']), /^Basic/);
    const missing = await revoke(rp, {});
    assert.equal(missing.statusCode, 400);
    assert.equal(json(missing).error, 'invalid_request');
  });

  test('JSON bodies are invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: 'x', client_id: rp.clientId, client_secret: rp.clientSecret }),
    });
    assert.equal(json(res).error, 'invalid_request');
  });

  test('a revoked access token is refused by the REST API too', async () => {
    const consoleClient = { clientId: 'console' } as TestClient;
    const token = await consoleToken(t, user.id);
    const me = () =>
      t.app.inject({
        method: 'GET',
        url: '/identity/organizations',
        headers: { authorization: `Bearer ${token}` },
      });
    const before = (await me()).statusCode;
    assert.notEqual(before, 401);
    // The console client is public: it revokes with its client id alone.
    const res = await revoke(consoleClient, { token });
    assert.equal(res.statusCode, 200);
    const after = await me();
    assert.equal(after.statusCode, 401);
    assert.equal(json(after).error.code, 'invalid_token');
  });

  test('revokeTokensForGrant and revokeAllForUser revoke families and access tokens', async () => {
    const other = await createApp(t, brand);
    const a = await tokensFor(rp);
    const b = await tokensFor(other);
    await t.ctx.db
      .transaction()
      .execute((trx) => revokeTokensForGrant(trx, t.clock, { userId: user.id, clientId: rp.clientId }));
    assert.equal(await userinfo(a.access_token), 401);
    assert.equal(json(await refresh(rp, a.refresh_token)).error, 'invalid_grant');
    assert.equal(await userinfo(b.access_token), 200);

    const victim = await createUser(t);
    const c = await tokensFor(other, victim.id);
    await t.ctx.db.transaction().execute((trx) => revokeAllForUser(trx, t.clock, victim.id));
    assert.equal(await userinfo(c.access_token), 401);
    assert.equal(json(await refresh(other, c.refresh_token)).error, 'invalid_grant');
  });

  test('the sweeper deletes expired records but keeps used codes for a day', async () => {
    const tokens = await tokensFor(rp);
    const rf = form({ token: tokens.access_token, client_id: rp.clientId, client_secret: rp.clientSecret });
    await t.app.inject({ method: 'POST', url: '/oauth2/revoke', ...rf });
    const count = async (table: 'revoked_tokens' | 'access_tokens' | 'authorization_codes') =>
      Number(
        (
          await t.ctx.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.ok((await count('revoked_tokens')) > 0);
    t.clock.advance(3601);
    await sweepExpired(t.ctx.db, t.clock);
    assert.equal(await count('revoked_tokens'), 0);
    assert.equal(await count('access_tokens'), 0);
    assert.ok((await count('authorization_codes')) > 0, 'used codes are kept to detect late reuse');
    t.clock.advance(24 * 3600);
    await sweepExpired(t.ctx.db, t.clock);
    assert.equal(await count('authorization_codes'), 0);
    // The refresh token outlives all of it.
    assert.equal((await refresh(rp, tokens.refresh_token)).statusCode, 200);
  });

  test('rate limit: 30 per minute per client, in the OAuth envelope with Retry-After', async () => {
    const t2 = await buildTestApp();
    try {
      const b2 = await createBrand(t2);
      const c2 = await createApp(t2, b2);
      const call = () => {
        const f = form({ token: 'x', client_id: c2.clientId, client_secret: c2.clientSecret });
        return t2.app.inject({ method: 'POST', url: '/oauth2/revoke', ...f });
      };
      for (let i = 0; i < 30; i++) assert.equal((await call()).statusCode, 200);
      const res = await call();
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).error, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) >= 1);
    } finally {
      await t2.close();
    }
  });
});
