import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import {
  type TestApp,
  type TestUser,
  buildTestApp,
  createUser,
  json,
  userChangedBehindTheApp,
} from '../helpers/app.js';
import {
  type TestBrand,
  type TestClient,
  clientOf,
  createApp,
  createBrand,
  disableApp,
  form,
  setProfile,
} from '../helpers/oidc.js';

let t: TestApp;
let brand: TestBrand;
let rp: TestClient;
let user: TestUser;

before(async () => {
  t = await buildTestApp();
  brand = await createBrand(t);
  rp = await createApp(t, brand);
  user = await createUser(t);
  await setProfile(t, user.id, {
    first_name: 'Alan',
    last_name: null,
    email: 'alan@example.com',
    email_verified: true,
    external_profile_picture_url: 'https://img.example/alan.png',
  });
});
after(() => t.close());

async function tokensFor(
  c: TestClient,
  userId: string,
  scopes = ['openid', 'profile', 'email'],
): Promise<{ access_token: string; id_token?: string; refresh_token?: string }> {
  const code = await issueAuthorizationCode(t.ctx, {
    client: await clientOf(t, c),
    userId,
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
  return json(res);
}

const get = (token: string, method: 'GET' | 'POST' = 'GET') =>
  t.app.inject({ method, url: '/userinfo', headers: { authorization: `Bearer ${token}` } });

function assertInvalidToken(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
  assert.equal(json(res).error.code, 'invalid_token');
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('GET and POST /userinfo', () => {
  test('returns sub and the profile claims that have values, never email', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    for (const method of ['GET', 'POST'] as const) {
      const res = await get(access_token, method);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(json(res), {
        sub: user.id,
        preferred_username: user.username,
        given_name: 'Alan',
        picture: 'https://img.example/alan.png',
      });
    }
  });

  test('without the profile scope only sub', async () => {
    const { access_token } = await tokensFor(rp, user.id, ['openid', 'email']);
    assert.deepEqual(json(await get(access_token)), { sub: user.id });
  });

  test('an uploaded profile picture wins over the provider picture', async () => {
    const other = await createUser(t);
    await t.ctx.db
      .insertInto('files')
      .values({
        id: 'file_pic1',
        file_key: 'abcdefghijklmnopqrstuvwx.png',
        content_type: 'image/png',
        bytes: 1,
        data: Buffer.from([1]),
        owner_user_id: other.id,
        created_at: t.clock.now(),
      })
      .execute();
    await t.ctx.db
      .updateTable('users')
      .set({ profile_picture_id: 'file_pic1', external_profile_picture_url: 'https://img.example/x.png' })
      .where('id', '=', other.id)
      .execute();
    const { access_token } = await tokensFor(rp, other.id);
    assert.equal(
      json(await get(access_token)).picture,
      `${t.ctx.config.filesBaseUrl}/abcdefghijklmnopqrstuvwx.png`,
    );
  });

  test('accepts access tokens of any brand, including console tokens', async () => {
    const otherBrand = await createBrand(t);
    const otherRp = await createApp(t, otherBrand);
    const { access_token } = await tokensFor(otherRp, user.id);
    assert.equal((await get(access_token)).statusCode, 200);
    assert.equal((await get(user.token)).statusCode, 200);
  });

  test('no token is 401 unauthorized with a Bearer challenge', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/userinfo' });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error.code, 'unauthorized');
    assert.equal(res.headers['www-authenticate'], 'Bearer');
  });

  test('an ID token used as an access token is refused', async () => {
    const { id_token } = await tokensFor(rp, user.id);
    assertInvalidToken(await get(id_token as string));
  });

  test('alg none is refused', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    const payload = access_token.split('.')[1];
    assertInvalidToken(await get(`${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`));
  });

  test('HS256 signed with our public key as the secret is refused', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    const jwks = json(await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
    const key = jwks.keys[0];
    const payload = access_token.split('.')[1];
    for (const secret of [JSON.stringify(key), key.n as string]) {
      const head = b64({ alg: 'HS256', typ: 'at+jwt', kid: key.kid });
      const sig = createHmac('sha256', secret).update(`${head}.${payload}`).digest('base64url');
      assertInvalidToken(await get(`${head}.${payload}.${sig}`));
    }
  });

  test('a tampered payload is refused', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    const [h, p, s] = access_token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.sub = 'usr_someone_else';
    assertInvalidToken(await get(`${h}.${b64(claims)}.${s}`));
  });

  test('an access token expires after 3600 s', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    t.clock.advance(3599);
    assert.equal((await get(access_token)).statusCode, 200);
    t.clock.advance(1);
    assertInvalidToken(await get(access_token));
  });

  test('a client-credentials token has no user: invalid_token', async () => {
    const f = form({
      grant_type: 'client_credentials',
      client_id: rp.clientId,
      client_secret: rp.clientSecret,
      scope: 'orders:read',
    });
    const cc = json(await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f }));
    assertInvalidToken(await get(cc.access_token));
  });

  test("a deleted user's and a disabled app's tokens are refused at once", async () => {
    const doomed = await createUser(t);
    const { access_token } = await tokensFor(rp, doomed.id);
    assert.equal((await get(access_token)).statusCode, 200);
    await t.ctx.db
      .updateTable('users')
      .set({ deleted_at: t.clock.now() })
      .where('id', '=', doomed.id)
      .execute();
    await userChangedBehindTheApp(t, doomed.id);
    assertInvalidToken(await get(access_token));

    const app2 = await createApp(t, brand);
    const tokens2 = await tokensFor(app2, user.id);
    assert.equal((await get(tokens2.access_token)).statusCode, 200);
    await disableApp(t, app2);
    assertInvalidToken(await get(tokens2.access_token));
  });

  test('rate limit: 60 per minute per token, then 429 with Retry-After', async () => {
    const { access_token } = await tokensFor(rp, user.id);
    for (let i = 0; i < 60; i++) assert.equal((await get(access_token)).statusCode, 200);
    const res = await get(access_token);
    assert.equal(res.statusCode, 429);
    assert.equal(json(res).error.code, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    // Another token of the same user has its own budget.
    const fresh = await tokensFor(rp, user.id);
    assert.equal((await get(fresh.access_token)).statusCode, 200);
  });
});
