import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
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
  holdsJwt,
  pkcePair,
  setProfile,
  subscribeTokenEvents,
} from '../helpers/oidc.js';
import { appChangeCommitted, notifyAppChanged } from '../../src/modules/apps/apps.notify.js';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import { invalidateClient } from '../../src/oidc/clients.js';
import { sha256 } from '../../src/lib/hash.js';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

let t: TestApp;
let brand: TestBrand;
let rp: TestClient;
let pub: TestClient;
let user: TestUser;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  brand = await createBrand(t);
  await subscribeTokenEvents(t, brand.orgId);
  rp = await createApp(t, brand);
  pub = await createApp(t, brand, { confidential: false });
  user = await createUser(t);
  await setProfile(t, user.id, {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.com',
    email_verified: true,
    external_profile_picture_url: 'https://img.example/ada.png',
    preferred_language: 'en',
  });
});
after(() => t.close());

async function code(
  c: TestClient,
  opts: { scopes?: string[]; challenge?: string; nonce?: string; userId?: string } = {},
): Promise<string> {
  return issueAuthorizationCode(t.ctx, {
    client: await clientOf(t, c),
    userId: opts.userId ?? user.id,
    redirectUri: c.redirectUri,
    scopes: opts.scopes ?? ['openid', 'profile', 'email', 'offline_access'],
    nonce: opts.nonce,
    codeChallenge: opts.challenge,
    authTime: t.clock.nowSec() - 5,
  });
}

function token(fields: Record<string, string | undefined>, headers: Record<string, string> = {}) {
  const f = form(fields);
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { ...f.headers, ...headers },
    payload: f.payload,
  });
}

function exchange(c: TestClient, codeValue: string, extra: Record<string, string | undefined> = {}) {
  return token({
    grant_type: 'authorization_code',
    code: codeValue,
    redirect_uri: c.redirectUri,
    client_id: c.clientId,
    client_secret: c.clientSecret,
    ...extra,
  });
}

async function userinfoStatus(accessToken: string): Promise<number> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/userinfo',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return res.statusCode;
}

describe('authorization_code grant', () => {
  test('issues an RS256 at+jwt access token, an ID token and a refresh token, with no-store headers', async () => {
    const res = await exchange(rp, await code(rp, { nonce: 'n-0S6_WzA2Mj' }));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    const body = json(res);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'openid profile email offline_access');
    assert.equal(typeof body.refresh_token, 'string');

    assert.deepEqual(decodeProtectedHeader(body.access_token).typ, 'at+jwt');
    assert.equal(decodeProtectedHeader(body.access_token).alg, 'RS256');
    const at = decodeJwt(body.access_token);
    assert.equal(at.iss, t.ctx.config.issuer);
    assert.equal(at.sub, user.id);
    assert.equal(at.aud, brand.slug);
    assert.equal(at.client_id, rp.clientId);
    assert.equal(at.scope, 'openid profile email offline_access');
    assert.equal(at.exp, t.clock.nowSec() + 3600);
    assert.equal(at.iat, t.clock.nowSec());
    assert.equal(typeof at.jti, 'string');
    assert.equal(at.auth_time, t.clock.nowSec() - 5);

    const id = decodeJwt(body.id_token);
    assert.equal(id.aud, rp.clientId);
    assert.equal(id.iss, t.ctx.config.issuer);
    assert.equal(id.sub, user.id);
    assert.equal(id.nonce, 'n-0S6_WzA2Mj');
    assert.equal(id.auth_time, t.clock.nowSec() - 5);
    const digest = createHash('sha256').update(body.access_token).digest();
    assert.equal(id.at_hash, digest.subarray(0, 16).toString('base64url'));
    assert.equal(id.given_name, 'Ada');
    assert.equal(id.family_name, 'Lovelace');
    assert.equal(id.preferred_username, user.username);
    assert.equal(id.picture, 'https://img.example/ada.png');
    assert.equal(id.locale, 'en');
    assert.equal(id.email, 'ada@example.com');
    assert.equal(id.email_verified, true);
    assert.equal(id.exp, t.clock.nowSec() + 3600);
  });

  test('access tokens name the org (slug) and client_id, for user grants and client credentials (audiences cannot collide across orgs)', async () => {
    const { slug: orgSlug } = await t.ctx.db
      .selectFrom('orgs')
      .select('slug')
      .where('id', '=', brand.orgId)
      .executeTakeFirstOrThrow();
    const user = decodeJwt(json(await exchange(rp, await code(rp))).access_token);
    assert.equal(user.org, orgSlug);
    assert.equal(user.client_id, rp.clientId);
    assert.equal(user.aud, brand.slug);
    const cc = await token({
      grant_type: 'client_credentials',
      scope: 'orders:read',
      client_id: rp.clientId,
      client_secret: rp.clientSecret,
    });
    assert.equal(cc.statusCode, 200, cc.body);
    const ccClaims = decodeJwt(json(cc).access_token);
    assert.equal(ccClaims.org, orgSlug);
    assert.equal(ccClaims.client_id, rp.clientId);
  });

  test('without openid there is no ID token; without offline_access no refresh token; profile claims follow scope', async () => {
    const res = await exchange(rp, await code(rp, { scopes: ['orders:read'] }));
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.id_token, undefined);
    assert.equal(body.refresh_token, undefined);

    const res2 = await exchange(rp, await code(rp, { scopes: ['openid'] }));
    const id = decodeJwt(json(res2).id_token);
    assert.equal(id.email, undefined);
    assert.equal(id.given_name, undefined);
    assert.equal(id.sub, user.id);
  });

  test('the token.issued event names user, app, scopes and grant, never a token', async () => {
    await exchange(rp, await code(rp, { scopes: ['openid', 'offline_access'] }));
    const ev = await t.ctx.db
      .selectFrom('events')
      .selectAll()
      .where('type', '=', 'token.issued')
      .where('org_id', '=', brand.orgId)
      .orderBy('created_at', 'desc')
      .execute();
    const expected = {
      user: user.id,
      app: rp.clientId,
      scopes: ['openid', 'offline_access'],
      grant: 'authorization_code',
    };
    assert.ok(
      ev.some((e) => isDeepStrictEqual(e.data, expected)),
      JSON.stringify(ev.map((e) => e.data)),
    );
    assert.ok(ev.every((e) => !holdsJwt(e.data)));
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', brand.orgId)
      .execute();
    assert.deepEqual(audit, []);
  });

  test('the code is stored only as its hash', async () => {
    const c = await code(rp);
    const rows = await t.ctx.db.selectFrom('authorization_codes').select('code_hash').execute();
    assert.ok(rows.some((r) => r.code_hash === sha256(c)));
    assert.ok(!rows.some((r) => r.code_hash === c));
  });

  test('a second redemption fails with invalid_grant and revokes the tokens of the first', async () => {
    const c = await code(rp);
    const first = json(await exchange(rp, c));
    assert.equal(await userinfoStatus(first.access_token), 200);
    const second = await exchange(rp, c);
    assert.equal(second.statusCode, 400);
    assert.equal(json(second).error, 'invalid_grant');
    assert.equal(await userinfoStatus(first.access_token), 401);
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: rp.clientId,
      client_secret: rp.clientSecret,
    });
    assert.equal(json(refresh).error, 'invalid_grant');
  });

  test('a code lives 60 seconds', async () => {
    const c1 = await code(rp);
    t.clock.advance(59);
    assert.equal((await exchange(rp, c1)).statusCode, 200);
    const c2 = await code(rp);
    t.clock.advance(60);
    const res = await exchange(rp, c2);
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_grant');
  });

  test('a code issued to another client is invalid_grant', async () => {
    const other = await createApp(t, brand);
    const res = await exchange(other, await code(rp), { redirect_uri: rp.redirectUri });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_grant');
  });

  test('redirect_uri must equal the one of the authorization request', async () => {
    const res = await exchange(rp, await code(rp), { redirect_uri: 'https://rp.example/other' });
    assert.equal(json(res).error, 'invalid_grant');
  });

  test('a request for another client or redirect URI does not burn the code (checked before consuming)', async () => {
    const c1 = await code(rp);
    const other = await createApp(t, brand);
    assert.equal(json(await exchange(other, c1, { redirect_uri: rp.redirectUri })).error, 'invalid_grant');
    assert.equal(
      json(await exchange(rp, c1, { redirect_uri: 'https://rp.example/other' })).error,
      'invalid_grant',
    );
    const ok = await exchange(rp, c1);
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('PKCE: the right verifier passes; none, a wrong one, or a downgrade fail with invalid_grant', async () => {
    const { verifier, challenge } = pkcePair();
    const ok = await exchange(pub, await code(pub, { challenge }), { code_verifier: verifier });
    assert.equal(ok.statusCode, 200, ok.body);

    const none = await exchange(pub, await code(pub, { challenge }));
    assert.equal(json(none).error, 'invalid_grant');

    const wrong = await exchange(pub, await code(pub, { challenge }), { code_verifier: pkcePair().verifier });
    assert.equal(json(wrong).error, 'invalid_grant');

    // A public client's code always carries a challenge; one without is refused.
    const bare = await exchange(pub, await code(pub), { code_verifier: verifier });
    assert.equal(json(bare).error, 'invalid_grant');

    // A confidential client with a stored challenge must still prove it.
    const conf = await exchange(rp, await code(rp, { challenge }));
    assert.equal(json(conf).error, 'invalid_grant');
    const confOk = await exchange(rp, await code(rp, { challenge }), { code_verifier: verifier });
    assert.equal(confOk.statusCode, 200);
  });

  test('a wrong or missing verifier does not burn the code: the client that holds the verifier still redeems it', async () => {
    const { verifier, challenge } = pkcePair();
    const c = await code(pub, { challenge });
    assert.equal(json(await exchange(pub, c, { code_verifier: pkcePair().verifier })).error, 'invalid_grant');
    assert.equal(json(await exchange(pub, c)).error, 'invalid_grant');
    const ok = await exchange(pub, c, { code_verifier: verifier });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('a malformed code_verifier is invalid_request', async () => {
    const res = await exchange(pub, await code(pub, { challenge: pkcePair().challenge }), {
      code_verifier: 'short',
    });
    assert.equal(json(res).error, 'invalid_request');
  });

  test('a deleted user cannot redeem', async () => {
    const gone = await createUser(t);
    const c = await code(rp, { userId: gone.id });
    await t.ctx.db
      .updateTable('users')
      .set({ deleted_at: t.clock.now() })
      .where('id', '=', gone.id)
      .execute();
    assert.equal(json(await exchange(rp, c)).error, 'invalid_grant');
  });
});

describe('refresh_token grant', () => {
  async function refreshable() {
    return json(await exchange(rp, await code(rp)));
  }
  const refresh = (rt: string, extra: Record<string, string> = {}, c: TestClient = rp) =>
    token({
      grant_type: 'refresh_token',
      refresh_token: rt,
      client_id: c.clientId,
      client_secret: c.clientSecret,
      ...extra,
    });

  test('rotates: a new refresh token and access token, the original scopes kept', async () => {
    const first = await refreshable();
    const res = await refresh(first.refresh_token);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.notEqual(body.refresh_token, first.refresh_token);
    assert.equal(body.scope, 'openid profile email offline_access');
    assert.equal(decodeJwt(body.id_token).aud, rp.clientId);
    const ev = await t.ctx.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'token.refreshed')
      .execute();
    const expected = {
      user: user.id,
      app: rp.clientId,
      scopes: ['openid', 'profile', 'email', 'offline_access'],
    };
    assert.ok(ev.some((e) => isDeepStrictEqual(e.data, expected)));
    assert.ok(!ev.some((e) => JSON.stringify(e.data).includes(body.refresh_token)));
  });

  test('a narrower scope is granted; a wider one is invalid_scope', async () => {
    const first = await refreshable();
    const narrow = json(await refresh(first.refresh_token, { scope: 'openid offline_access' }));
    assert.equal(narrow.scope, 'openid offline_access');
    const wide = await refresh(narrow.refresh_token, { scope: 'openid offline_access orders:write' });
    assert.equal(wide.statusCode, 400);
    assert.equal(json(wide).error, 'invalid_scope');
  });

  test('a narrower scope narrows only these tokens: the new refresh token keeps the grant (RFC 6749 §6)', async () => {
    const first = await refreshable();
    // Not even offline_access asked for: the grant goes on, rotated, as it was.
    const narrow = json(await refresh(first.refresh_token, { scope: 'openid' }));
    assert.equal(narrow.scope, 'openid');
    assert.equal(decodeJwt(narrow.access_token).scope, 'openid');
    assert.equal(typeof narrow.refresh_token, 'string');
    const stored = await t.ctx.db
      .selectFrom('refresh_tokens')
      .select('scopes')
      .where('token_hash', '=', sha256(narrow.refresh_token))
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored.scopes, ['openid', 'profile', 'email', 'offline_access']);
    // The next refresh without `scope` gets the whole grant back, and may ask for any part of it.
    const whole = json(await refresh(narrow.refresh_token));
    assert.equal(whole.scope, 'openid profile email offline_access');
    const part = await refresh(whole.refresh_token, { scope: 'openid email' });
    assert.equal(part.statusCode, 200, part.body);
    assert.equal(json(part).scope, 'openid email');
  });

  test("a scope taken out of the app's allowed scopes leaves the grant at the next refresh", async () => {
    const app = await createApp(t, brand);
    const first = json(await exchange(app, await code(app)));
    assert.equal(first.scope, 'openid profile email offline_access');
    const allow = async (scopes: string[]) => {
      await t.ctx.db
        .updateTable('apps')
        .set({ allowed_scopes: scopes })
        .where('id', '=', app.appId)
        .execute();
      invalidateClient(t.ctx, app.clientId);
    };
    await allow(['openid', 'offline_access', 'orders:read']);
    const asked = await refresh(first.refresh_token, { scope: 'openid email' }, app);
    assert.equal(json(asked).error, 'invalid_scope', 'email is no longer the app’s to ask for');
    const narrowed = json(await refresh(first.refresh_token, {}, app));
    assert.equal(narrowed.scope, 'openid offline_access');
    const stored = await t.ctx.db
      .selectFrom('refresh_tokens')
      .select('scopes')
      .where('token_hash', '=', sha256(narrowed.refresh_token))
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored.scopes, ['openid', 'offline_access'], 'the grant itself narrowed');
    // Allowing email again does not bring it back into this grant.
    await allow(['openid', 'profile', 'email', 'offline_access']);
    const again = json(await refresh(narrowed.refresh_token, {}, app));
    assert.equal(again.scope, 'openid offline_access');
    // Without offline_access the app refreshes once more and gets no new refresh token.
    await allow(['openid', 'profile', 'email']);
    const last = await refresh(again.refresh_token, {}, app);
    assert.equal(last.statusCode, 200, last.body);
    assert.equal(json(last).scope, 'openid');
    assert.equal(json(last).refresh_token, undefined);
  });

  test('a refresh with a bad scope does not burn the token: the retry with a good scope succeeds', async () => {
    const first = await refreshable();
    const wide = await refresh(first.refresh_token, { scope: 'openid offline_access orders:write' });
    assert.equal(json(wide).error, 'invalid_scope');
    const malformed = await refresh(first.refresh_token, { scope: 'openid "bad' });
    assert.equal(json(malformed).error, 'invalid_scope');
    const retry = await refresh(first.refresh_token, { scope: 'openid offline_access' });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(await userinfoStatus(json(retry).access_token), 200);
  });

  test('reuse of a consumed refresh token is invalid_grant and revokes the whole family', async () => {
    const first = await refreshable();
    const second = json(await refresh(first.refresh_token));
    assert.equal(await userinfoStatus(second.access_token), 200);
    const reuse = await refresh(first.refresh_token);
    assert.equal(reuse.statusCode, 400);
    assert.equal(json(reuse).error, 'invalid_grant');
    assert.equal(json(await refresh(second.refresh_token)).error, 'invalid_grant');
    assert.equal(await userinfoStatus(second.access_token), 401);
    assert.equal(await userinfoStatus(first.access_token), 401);
  });

  test("another client's refresh token is invalid_grant", async () => {
    const other = await createApp(t, brand);
    const first = await refreshable();
    assert.equal(json(await refresh(first.refresh_token, {}, other)).error, 'invalid_grant');
  });

  test('refresh tokens are stored hashed and unknown ones are invalid_grant', async () => {
    const first = await refreshable();
    const row = await t.ctx.db
      .selectFrom('refresh_tokens')
      .select('id')
      .where('token_hash', '=', sha256(first.refresh_token))
      .executeTakeFirst();
    assert.ok(row);
    assert.equal(json(await refresh('not-a-token')).error, 'invalid_grant');
  });

  test('missing refresh_token is invalid_request', async () => {
    const res = await token({
      grant_type: 'refresh_token',
      client_id: rp.clientId,
      client_secret: rp.clientSecret,
    });
    assert.equal(json(res).error, 'invalid_request');
  });
});

describe('token endpoint errors', () => {
  test('unknown grant_type is unsupported_grant_type, even before client authentication', async () => {
    const res = await token({ grant_type: 'password', client_id: rp.clientId, client_secret: 'wrong' });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'unsupported_grant_type');
  });

  test('missing grant_type is invalid_request', async () => {
    const res = await token({ client_id: rp.clientId, client_secret: rp.clientSecret });
    assert.equal(json(res).error, 'invalid_request');
  });

  test('a grant the app may not use is unauthorized_client', async () => {
    const limited = await createApp(t, brand, { grants: ['authorization_code'] });
    const res = await token({
      grant_type: 'client_credentials',
      client_id: limited.clientId,
      client_secret: limited.clientSecret,
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'unauthorized_client');
  });

  test('JSON bodies are refused with invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: rp.clientId,
        client_secret: rp.clientSecret,
      }),
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_request');
  });

  test('a repeated parameter is invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&grant_type=client_credentials&client_id=${rp.clientId}`,
    });
    assert.equal(json(res).error, 'invalid_request');
  });

  test('wrong secret is 401 invalid_client; with Basic also WWW-Authenticate: Basic', async () => {
    const post = await token({
      grant_type: 'client_credentials',
      client_id: rp.clientId,
      client_secret: 'nope',
    });
    assert.equal(post.statusCode, 401);
    assert.equal(json(post).error, 'invalid_client');
    assert.equal(post.headers['www-authenticate'], undefined);
    const basic = await token({ grant_type: 'client_credentials' }, basicAuth(rp.clientId, 'nope'));
    assert.equal(basic.statusCode, 401);
    assert.equal(json(basic).error, 'invalid_client');
    assert.match(String(basic.headers['www-authenticate']), /^Basic/);
    assert.ok(!basic.body.includes('nope'));
  });

  test('unknown client, missing credentials, a confidential client without its secret: invalid_client', async () => {
    assert.equal(
      json(await token({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' })).error,
      'invalid_client',
    );
    assert.equal((await token({ grant_type: 'client_credentials' })).statusCode, 401);
    assert.equal(
      json(await token({ grant_type: 'client_credentials', client_id: rp.clientId })).error,
      'invalid_client',
    );
  });

  test('a public client that sends a secret is invalid_client', async () => {
    const res = await exchange(pub, await code(pub), { client_secret: 'made-up' });
    assert.equal(json(res).error, 'invalid_client');
  });

  test('Basic and client_secret together is invalid_request', async () => {
    const res = await token(
      { grant_type: 'client_credentials', client_secret: rp.clientSecret },
      basicAuth(rp.clientId, rp.clientSecret),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_request');
  });

  test('Basic credentials are form-urlencoded before base64 (RFC 6749 §2.3.1)', async () => {
    const brand2 = await createBrand(t);
    const odd = await createApp(t, brand2);
    const secret = 'a b:c%d+e';
    await t.ctx.db
      .updateTable('apps')
      .set({ client_secret_hash: sha256(secret) })
      .where('id', '=', odd.appId)
      .execute();
    const { invalidateClient } = await import('../../src/oidc/clients.js');
    invalidateClient(t.ctx, odd.clientId);
    const res = await token(
      { grant_type: 'client_credentials', scope: 'orders:read' },
      basicAuth(odd.clientId, secret),
    );
    assert.equal(res.statusCode, 200, res.body);
  });

  test('an app change announced by the apps module takes effect at once, without waiting for the cache', async () => {
    const changing = await createApp(t, brand);
    const call = () =>
      token({
        grant_type: 'client_credentials',
        client_id: changing.clientId,
        client_secret: changing.clientSecret,
      });
    assert.equal((await call()).statusCode, 200);
    await t.ctx.db.transaction().execute(async (trx) => {
      await trx.updateTable('apps').set({ enabled: false }).where('id', '=', changing.appId).execute();
      await notifyAppChanged(t.ctx, trx, [changing.clientId]);
    });
    appChangeCommitted(t.ctx, [changing.clientId]);
    assert.equal(json(await call()).error, 'invalid_client');
  });

  test('a disabled app is invalid_client', async () => {
    const gone = await createApp(t, brand);
    await disableApp(t, gone);
    const res = await token({
      grant_type: 'client_credentials',
      client_id: gone.clientId,
      client_secret: gone.clientSecret,
    });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error, 'invalid_client');
  });
});
