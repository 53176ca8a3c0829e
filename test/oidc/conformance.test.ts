/**
 * The OpenID Foundation's Basic OP and Config OP plans, one test per module (named after it), for
 * a code-flow provider without dynamic registration. openid-client is the relying party (discovery,
 * code exchange with ID-token validation, userinfo, refresh); the browser's part (authorize, the
 * hosted sign-in, consent) goes through the headless sign-in API with a real Ed25519 wallet.
 * The README's conformance table names these tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { ManualClock } from '../../src/lib/clock.js';
import { invalidateClient } from '../../src/oidc/clients.js';
import { type TestApp, buildTestApp, userChangedBehindTheApp } from '../helpers/app.js';
import { freePort } from '../helpers/oidc.js';
import {
  type SeededClient,
  collectCookies,
  cookieHeader,
  randomIp,
  seedClient,
  walletSignIn,
} from '../helpers/signin.js';
import { type TestWallet, createTestWallet } from '../helpers/wallet.js';

// openid-client checks ID-token times against the real clock, so the app's clock starts now.
let t: TestApp;
let issuer: URL;
let rp: SeededClient;
let config: client.Configuration;
let postConfig: client.Configuration;

const insecure = { execute: [client.allowInsecureRequests] };
const SCOPES = ['openid', 'profile', 'email', 'offline_access', 'wallet'];
const AFTER = 'https://app.example.com/after';

before(async () => {
  const port = await freePort();
  t = await buildTestApp({
    env: { BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_MULTIPLIER: '1000' },
    clock: new ManualClock(Date.now()),
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  issuer = new URL(`http://127.0.0.1:${port}`);
  rp = await seedClient(t, { confidential: true, scopes: SCOPES });
  await t.ctx.db
    .updateTable('apps')
    .set({ post_logout_redirect_uris: [AFTER, `${AFTER}?tenant=1`] })
    .where('id', '=', rp.appId)
    .execute();
  invalidateClient(t.ctx, rp.clientId);
  config = await client.discovery(issuer, rp.clientId, rp.clientSecret, undefined, insecure);
  postConfig = await client.discovery(
    issuer,
    rp.clientId,
    rp.clientSecret,
    client.ClientSecretPost(rp.clientSecret),
    insecure,
  );
});
after(() => t.close());

/** One browser: its cookies and the wallet it signs in with. */
interface Browser {
  jar: Record<string, string>;
  wallet: TestWallet;
}
const browser = (): Browser => ({ jar: {}, wallet: createTestWallet() });

interface Started {
  state: string;
  nonce?: string;
  /** The response to the authorize request. */
  status: number;
  location?: URL;
  body: string;
}

/** GET (or POST) /oauth2/authorize with the RP's parameters, as the browser. */
async function authorize(
  b: Browser,
  params: Record<string, string | null> = {},
  opts: { method?: 'GET' | 'POST'; cfg?: client.Configuration } = {},
): Promise<Started> {
  const state = client.randomState();
  const base: Record<string, string | null> = {
    redirect_uri: rp.redirectUri,
    scope: 'openid',
    state,
    nonce: client.randomNonce(),
    ...params,
  };
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== null) clean[k] = v;
  const url = client.buildAuthorizationUrl(opts.cfg ?? config, clean);
  if (params.response_type === null) url.searchParams.delete('response_type');
  if (params.client_id === null) url.searchParams.delete('client_id');
  const headers = { cookie: cookieHeader(b.jar) };
  let res =
    opts.method === 'POST'
      ? await t.app.inject({
          method: 'POST',
          url: url.pathname,
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          payload: url.searchParams.toString(),
          remoteAddress: randomIp(),
        })
      : undefined;
  // A POST without the session (as a cross-site form post arrives) comes back as the same GET.
  if (res?.statusCode === 303) {
    const get = new URL(String(res.headers.location));
    assert.equal(get.pathname, url.pathname);
    assert.deepEqual([...get.searchParams], [...url.searchParams]);
  }
  res =
    res && res.statusCode !== 303
      ? res
      : await t.app.inject({
          method: 'GET',
          url: url.pathname + url.search,
          headers,
          remoteAddress: randomIp(),
        });
  collectCookies(res, b.jar);
  const loc = res.headers.location;
  return {
    state: clean.state,
    nonce: clean.nonce,
    status: res.statusCode,
    location: typeof loc === 'string' ? new URL(loc, issuer) : undefined,
    body: res.body,
  };
}

const isSignin = (s: Started) => s.status === 302 && s.location?.pathname.startsWith('/signin/') === true;

/** Where the browser ends up: signs in with its wallet and consents when the issuer asks. */
async function complete(b: Browser, s: Started, wallet = b.wallet): Promise<URL> {
  if (!isSignin(s)) {
    assert.equal(s.status, 302, s.body);
    return s.location as URL;
  }
  const id = (s.location as URL).pathname.split('/').pop() as string;
  const view = await t.app.inject({
    method: 'GET',
    url: `/interactions/${id}`,
    headers: { cookie: cookieHeader(b.jar) },
  });
  let redirectTo: string | undefined;
  if (view.json().step === 'signin') {
    const { res } = await walletSignIn(t, id, wallet, b.jar);
    assert.equal(res.statusCode, 200, res.body);
    redirectTo = res.json().redirectTo;
  }
  if (!redirectTo) {
    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(b.jar) },
    });
    assert.equal(consent.statusCode, 200, consent.body);
    redirectTo = consent.json().redirectTo;
  }
  return new URL(redirectTo as string);
}

/** The code at the callback, redeemed and checked by openid-client (state, iss, nonce, ID token). */
function redeem(s: Started, callback: URL, opts: { cfg?: client.Configuration; maxAge?: number } = {}) {
  return client.authorizationCodeGrant(opts.cfg ?? config, callback, {
    expectedState: s.state,
    expectedNonce: s.nonce,
    maxAge: opts.maxAge,
  });
}

/** A whole sign-in: authorize, wallet, consent, tokens. */
async function signIn(b: Browser, params: Record<string, string | null> = {}) {
  const s = await authorize(b, params);
  return redeem(s, await complete(b, s));
}

/** The OAuth error the authorize endpoint sent back to the redirect URI. */
function redirectError(s: Started): string | null {
  assert.equal(s.status, 302, s.body);
  const loc = s.location as URL;
  assert.equal(`${loc.origin}${loc.pathname}`, rp.redirectUri);
  assert.equal(loc.searchParams.get('state'), s.state);
  assert.equal(loc.searchParams.get('code'), null);
  return loc.searchParams.get('error');
}

function userinfoRequest(init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }) {
  return fetch(new URL('/userinfo', issuer), init);
}

describe('OpenID Basic OP plan', () => {
  test('oidcc-server', async () => {
    const b = browser();
    const tokens = await signIn(b);
    const claims = tokens.claims();
    assert.ok(claims);
    assert.equal(claims.iss, t.ctx.config.issuer);
    assert.equal(claims.aud, rp.clientId);
    assert.equal(typeof claims.auth_time, 'number');
    assert.equal(typeof claims.sid, 'string');
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.equal(info.sub, claims.sub);
  });

  test('oidcc-response-type-missing', async () => {
    const s = await authorize(browser(), { response_type: null });
    assert.equal(redirectError(s), 'invalid_request');
  });

  test('oidcc-userinfo-get', async () => {
    const tokens = await signIn(browser());
    const res = await userinfoRequest({
      method: 'GET',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).sub, tokens.claims()?.sub);
  });

  test('oidcc-userinfo-post-header', async () => {
    const tokens = await signIn(browser());
    const res = await userinfoRequest({
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal((await res.json()).sub, tokens.claims()?.sub);
  });

  test('oidcc-userinfo-post-body', async () => {
    const tokens = await signIn(browser());
    const res = await userinfoRequest({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: tokens.access_token }).toString(),
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).sub, tokens.claims()?.sub);
    // Both places at once is one method too many (RFC 6750 §2); a bad token in the body is refused.
    const both = await userinfoRequest({
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ access_token: tokens.access_token }).toString(),
    });
    assert.equal(both.status, 401);
    const bad = await userinfoRequest({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'access_token=nope',
    });
    assert.equal(bad.status, 401);
  });

  test('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', async () => {
    const tokens = await signIn(browser(), { nonce: null });
    assert.equal(tokens.claims()?.nonce, undefined);
  });

  test('oidcc-scope-profile', async () => {
    const b = browser();
    const first = await signIn(b, { scope: 'openid profile' });
    const sub = first.claims()?.sub as string;
    await t.ctx.db
      .updateTable('users')
      .set({ first_name: 'Ada', last_name: 'Lovelace' })
      .where('id', '=', sub)
      .execute();
    await userChangedBehindTheApp(t, sub);
    const tokens = await signIn(b, { scope: 'openid profile' });
    assert.equal(tokens.claims()?.given_name, 'Ada');
    const info = await client.fetchUserInfo(config, tokens.access_token, sub);
    assert.equal(info.given_name, 'Ada');
    assert.equal(info.family_name, 'Lovelace');
  });

  test('oidcc-scope-email', async () => {
    const b = browser();
    const first = await signIn(b, { scope: 'openid email' });
    const sub = first.claims()?.sub as string;
    await t.ctx.db
      .updateTable('users')
      .set({ email: 'ada@example.com', email_verified: true })
      .where('id', '=', sub)
      .execute();
    await userChangedBehindTheApp(t, sub);
    const tokens = await signIn(b, { scope: 'openid email' });
    // The interface keeps email out of /userinfo: the ID token carries it.
    assert.equal(tokens.claims()?.email, 'ada@example.com');
    assert.equal(tokens.claims()?.email_verified, true);
  });

  test('oidcc-scope-address and oidcc-scope-phone: not offered, so refused as invalid_scope', async () => {
    const m = config.serverMetadata();
    for (const scope of ['address', 'phone']) {
      assert.ok(!m.scopes_supported?.includes(scope));
      const s = await authorize(browser(), { scope: `openid ${scope}` });
      assert.equal(redirectError(s), 'invalid_scope');
    }
  });

  test('oidcc-scope-all', async () => {
    const tokens = await signIn(browser(), { scope: 'openid profile email wallet' });
    assert.deepEqual(tokens.scope?.split(' ').sort(), ['email', 'openid', 'profile', 'wallet']);
    const info = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    assert.equal(typeof info.wallet_address, 'string');
  });

  test('oidcc-ensure-other-scope-order-succeeds', async () => {
    const tokens = await signIn(browser(), { scope: 'email openid' });
    assert.ok(tokens.id_token);
  });

  test('oidcc-display-page and oidcc-display-popup', async () => {
    for (const display of ['page', 'popup']) {
      const tokens = await signIn(browser(), { display });
      assert.ok(tokens.id_token, display);
    }
  });

  test('oidcc-prompt-login', async () => {
    const b = browser();
    const first = await signIn(b);
    t.clock.advance(2);
    const s = await authorize(b, { prompt: 'login' });
    assert.ok(isSignin(s), 'prompt=login must show the sign-in again');
    const second = await redeem(s, await complete(b, s));
    assert.ok((second.claims()?.auth_time as number) > (first.claims()?.auth_time as number));
    assert.equal(second.claims()?.sub, first.claims()?.sub);
    // The same user signing in again renews the session (DESIGN §3: sid is stable for the session;
    // only a different wallet replaces it), so the sid apps hold for back-channel logout stays good.
    assert.equal(second.claims()?.sid, first.claims()?.sid, 'the same user: the same session');
    // Another wallet signing in on this browser replaces the session: another user, a new sid.
    const s2 = await authorize(b, { prompt: 'login' });
    const third = await redeem(s2, await complete(b, s2, createTestWallet()));
    assert.notEqual(third.claims()?.sub, first.claims()?.sub);
    assert.notEqual(third.claims()?.sid, second.claims()?.sid);
    const silent = await authorize(b, { prompt: 'none' });
    assert.equal((await redeem(silent, silent.location as URL)).claims()?.sub, third.claims()?.sub);
  });

  test('oidcc-prompt-none-not-logged-in', async () => {
    const s = await authorize(browser(), { prompt: 'none' });
    assert.equal(redirectError(s), 'login_required');
  });

  test('oidcc-prompt-none-logged-in', async () => {
    const b = browser();
    const first = await signIn(b);
    const s = await authorize(b, { prompt: 'none' });
    assert.ok(!isSignin(s));
    const again = await redeem(s, s.location as URL);
    assert.equal(again.claims()?.sub, first.claims()?.sub);
    assert.equal(
      again.claims()?.auth_time,
      first.claims()?.auth_time,
      'auth_time stable across silent sign-ins',
    );
    assert.equal(again.claims()?.sid, first.claims()?.sid);
  });

  test('oidcc-max-age-1', async () => {
    const b = browser();
    const first = await signIn(b);
    t.clock.advance(2);
    const s = await authorize(b, { max_age: '1' });
    assert.ok(isSignin(s), 'a sign-in older than max_age must be asked again');
    const second = await redeem(s, await complete(b, s));
    assert.ok((second.claims()?.auth_time as number) > (first.claims()?.auth_time as number));
  });

  test('oidcc-max-age-10000', async () => {
    const b = browser();
    const first = await signIn(b);
    t.clock.advance(2);
    const s = await authorize(b, { max_age: '10000' });
    assert.ok(!isSignin(s), 'a recent sign-in is used silently');
    const second = await redeem(s, s.location as URL, { maxAge: 10000 });
    assert.equal(second.claims()?.auth_time, first.claims()?.auth_time);
  });

  test('oidcc-id-token-hint', async () => {
    const b = browser();
    const first = await signIn(b);
    const s = await authorize(b, { prompt: 'none', id_token_hint: first.id_token as string });
    const again = await redeem(s, s.location as URL);
    assert.equal(again.claims()?.sub, first.claims()?.sub);
    // Another user's hint: with prompt=none login_required; without, a fresh sign-in, and a
    // different user signing in there is login_required too.
    const other = await signIn(browser());
    const none = await authorize(b, { prompt: 'none', id_token_hint: other.id_token as string });
    assert.equal(redirectError(none), 'login_required');
    const ask = await authorize(b, { id_token_hint: other.id_token as string });
    assert.ok(isSignin(ask));
    const wrong = await complete(b, ask);
    assert.equal(wrong.searchParams.get('error'), 'login_required');
    // Not an ID token of ours: invalid_request.
    const forged = await authorize(b, { id_token_hint: 'e30.e30.' });
    assert.equal(redirectError(forged), 'invalid_request');
  });

  test('oidcc-login-hint', async () => {
    assert.ok((await signIn(browser(), { login_hint: 'someone@example.com' })).id_token);
  });

  test('oidcc-ui-locales', async () => {
    assert.ok((await signIn(browser(), { ui_locales: 'se' })).id_token);
  });

  test('oidcc-claims-locales', async () => {
    assert.ok((await signIn(browser(), { claims_locales: 'se' })).id_token);
  });

  test('oidcc-ensure-request-with-acr-values-succeeds', async () => {
    assert.ok((await signIn(browser(), { acr_values: '1 2' })).id_token);
  });

  test('oidcc-ensure-request-with-valid-pkce-succeeds', async () => {
    const b = browser();
    const verifier = client.randomPKCECodeVerifier();
    const s = await authorize(b, {
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await complete(b, s);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      expectedState: s.state,
      expectedNonce: s.nonce,
      pkceCodeVerifier: verifier,
    });
    assert.ok(tokens.id_token);
  });

  test('oidcc-ensure-registered-redirect-uri', async () => {
    const s = await authorize(browser(), { redirect_uri: 'https://attacker.example/callback' });
    assert.equal(s.status, 400);
    assert.equal(s.location, undefined, 'never redirected to an unregistered URI');
  });

  test('oidcc-ensure-redirect-uri-in-authorization-request', async () => {
    const s = await authorize(browser(), { redirect_uri: null });
    assert.equal(s.status, 400);
    assert.equal(s.location, undefined);
  });

  test('oidcc-codereuse', async () => {
    const b = browser();
    const s = await authorize(b);
    const callback = await complete(b, s);
    const tokens = await redeem(s, callback);
    await assert.rejects(redeem(s, callback), (e: Error & { error?: string }) => e.error === 'invalid_grant');
    // The tokens of the reused code are revoked (RFC 6749 §4.1.2: SHOULD).
    const res = await userinfoRequest({
      method: 'GET',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 401);
  });

  test('oidcc-codereuse-30seconds', async () => {
    const b = browser();
    const s = await authorize(b);
    const callback = await complete(b, s);
    const tokens = await redeem(s, callback);
    t.clock.advance(30);
    await assert.rejects(redeem(s, callback), (e: Error & { error?: string }) => e.error === 'invalid_grant');
    const res = await userinfoRequest({
      method: 'GET',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 401);
  });

  test('oidcc-ensure-post-request-succeeds', async () => {
    const b = browser();
    const s = await authorize(b, {}, { method: 'POST' });
    assert.ok(isSignin(s), s.body);
    const tokens = await redeem(s, await complete(b, s));
    assert.ok(tokens.id_token);
    // Signed in, a POST comes straight back with a code, like a GET.
    const again = await authorize(b, { prompt: 'none' }, { method: 'POST' });
    assert.ok((await redeem(again, again.location as URL)).id_token);
  });

  test('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported', async () => {
    const payload = Buffer.from(JSON.stringify({ client_id: rp.clientId, scope: 'openid' })).toString(
      'base64url',
    );
    const s = await authorize(browser(), { request: `eyJhbGciOiJub25lIn0.${payload}.` });
    assert.equal(redirectError(s), 'request_not_supported');
    assert.equal(config.serverMetadata().request_parameter_supported, false);
  });

  test('oidcc-request-uri-unsigned', async () => {
    const s = await authorize(browser(), { request_uri: 'https://rp.example/request.jwt' });
    assert.equal(redirectError(s), 'request_uri_not_supported');
    assert.equal(config.serverMetadata().request_uri_parameter_supported, false);
  });

  test('oidcc-claims-essential: the claims parameter is not supported and is ignored', async () => {
    const claims = JSON.stringify({ userinfo: { name: { essential: true } } });
    assert.ok((await signIn(browser(), { claims })).id_token);
    assert.equal(config.serverMetadata().claims_parameter_supported, false);
  });

  test('oidcc-refresh-token', async () => {
    const first = await signIn(browser(), { scope: 'openid offline_access', prompt: 'consent' });
    assert.ok(first.refresh_token);
    const refreshed = await client.refreshTokenGrant(config, first.refresh_token);
    assert.equal(refreshed.claims()?.sub, first.claims()?.sub);
    assert.notEqual(refreshed.refresh_token, first.refresh_token);
  });

  test('oidcc-server-client-secret-post', async () => {
    const b = browser();
    const s = await authorize(b, {}, { cfg: postConfig });
    const tokens = await redeem(s, await complete(b, s), { cfg: postConfig });
    assert.ok(tokens.id_token);
  });

  test('oidcc-id-token-signature (and oidcc-idtoken-rs256)', async () => {
    const tokens = await signIn(browser());
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string));
    const { protectedHeader, payload } = await jwtVerify(tokens.id_token as string, jwks, {
      issuer: t.ctx.config.issuer,
      audience: rp.clientId,
      algorithms: ['RS256'],
      currentDate: t.clock.now(),
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.ok(protectedHeader.kid);
    assert.equal(payload.sub, tokens.claims()?.sub);
  });

  test('oidcc-id-token-unsigned: never issued, and an unsigned ID token is no hint', async () => {
    assert.deepEqual(config.serverMetadata().id_token_signing_alg_values_supported, ['RS256']);
    const tokens = await signIn(browser());
    assert.equal(decodeProtectedHeader(tokens.id_token as string).alg, 'RS256');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${
      (tokens.id_token as string).split('.')[1]
    }.`;
    const s = await authorize(browser(), { id_token_hint: unsigned });
    assert.equal(redirectError(s), 'invalid_request');
  });

  test('token responses are not cached (Cache-Control: no-store, Pragma: no-cache)', async () => {
    const b = browser();
    const s = await authorize(b);
    const code = (await complete(b, s)).searchParams.get('code') as string;
    const res = await fetch(new URL('/oauth2/token', issuer), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: rp.redirectUri,
      }).toString(),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('pragma'), 'no-cache');
  });
});

describe('OpenID Config OP plan', () => {
  test('oidcc-discovery-endpoint-verification', async () => {
    const res = await fetch(new URL('/.well-known/openid-configuration', issuer));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') as string, /^application\/json/);
    const m = await res.json();
    for (const field of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ])
      assert.ok(m[field] !== undefined, field);
    assert.ok(m.scopes_supported.includes('openid'));
    assert.ok(m.response_types_supported.includes('code'));
    assert.ok(m.id_token_signing_alg_values_supported.includes('RS256'));
    assert.ok(m.claims_supported.includes('sub'));
    assert.equal(m.request_parameter_supported, false);
    assert.equal(m.request_uri_parameter_supported, false);
    assert.equal(m.claims_parameter_supported, false);
  });

  test('oidcc-discovery-issuer-not-matching-config: the issuer is the URL discovery was fetched from', () => {
    assert.equal(config.serverMetadata().issuer, issuer.href.replace(/\/$/, ''));
    assert.equal(t.ctx.config.issuer, config.serverMetadata().issuer);
  });

  test('oidcc-discovery-jwks: RSA signing keys with kid, use and alg', async () => {
    const res = await fetch(config.serverMetadata().jwks_uri as string);
    assert.equal(res.status, 200);
    const { keys } = await res.json();
    assert.ok(keys.length >= 1);
    for (const k of keys) {
      assert.equal(k.kty, 'RSA');
      assert.equal(k.use, 'sig');
      assert.equal(k.alg, 'RS256');
      assert.ok(k.kid && k.n && k.e);
      assert.equal(k.d, undefined, 'no private part');
    }
  });

  test('oidcc-userinfo-rs256: not applicable, /userinfo answers JSON (no signed userinfo)', async () => {
    const tokens = await signIn(browser());
    const res = await userinfoRequest({
      method: 'GET',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.match(res.headers.get('content-type') as string, /^application\/json/);
    assert.equal(config.serverMetadata().userinfo_signing_alg_values_supported, undefined);
  });
});

describe('OpenID RP-Initiated Logout plan (back-channel: test/oidc/logout.test.ts)', () => {
  /** GET /oauth2/logout as the browser. */
  async function logout(b: Browser, params: Record<string, string>) {
    const end = client.buildEndSessionUrl(config, params);
    return t.app.inject({
      method: 'GET',
      url: `${end.pathname}${end.search}`,
      headers: { cookie: cookieHeader(b.jar) },
    });
  }
  /** Whether the browser is still signed in to the app's brand (prompt=none gets a code). */
  async function signedIn(b: Browser): Promise<boolean> {
    const s = await authorize(b, { prompt: 'none' });
    return (s.location as URL).searchParams.has('code');
  }
  async function signedInBrowser() {
    const b = browser();
    const tokens = await signIn(b);
    assert.ok(await signedIn(b));
    return { b, idToken: tokens.id_token as string };
  }
  const signedOutPage = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers.location, undefined);
    assert.match(res.body, /id="signed-out"/);
  };
  const errorPage = (res: { statusCode: number; headers: Record<string, unknown> }) => {
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
  };

  test('oidcc-rp-initiated-logout', async () => {
    const { b, idToken } = await signedInBrowser();
    const res = await logout(b, { id_token_hint: idToken, post_logout_redirect_uri: AFTER, state: 'bye' });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `${AFTER}?state=bye`);
    collectCookies(res, b.jar);
    assert.equal(await signedIn(b), false);
  });

  test('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri', async () => {
    const { b, idToken } = await signedInBrowser();
    errorPage(
      await logout(b, { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/out' }),
    );
    assert.ok(await signedIn(b), 'ends nothing');
  });

  test('oidcc-rp-initiated-logout-modified-id-token-hint', async () => {
    const { b, idToken } = await signedInBrowser();
    const [h, p, sig] = idToken.split('.');
    const modified = `${h}.${p}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
    errorPage(await logout(b, { id_token_hint: modified, post_logout_redirect_uri: AFTER }));
    assert.ok(await signedIn(b), 'ends nothing');
  });

  test('oidcc-rp-initiated-logout-no-id-token-hint', async () => {
    const { b } = await signedInBrowser();
    const res = await logout(b, { client_id: rp.clientId, post_logout_redirect_uri: AFTER, state: 's1' });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `${AFTER}?state=s1`);
    collectCookies(res, b.jar);
    assert.equal(await signedIn(b), false);
  });

  test('oidcc-rp-initiated-logout-no-params', async () => {
    const { b } = await signedInBrowser();
    const end = new URL(config.serverMetadata().end_session_endpoint as string);
    const res = await t.app.inject({
      method: 'GET',
      url: end.pathname,
      headers: { cookie: cookieHeader(b.jar) },
    });
    signedOutPage(res);
    collectCookies(res, b.jar);
    assert.equal(await signedIn(b), false);
  });

  test('oidcc-rp-initiated-logout-no-post-logout-redirect-uri', async () => {
    const { b, idToken } = await signedInBrowser();
    const res = await logout(b, { id_token_hint: idToken });
    signedOutPage(res);
    collectCookies(res, b.jar);
    assert.equal(await signedIn(b), false);
  });

  test('oidcc-rp-initiated-logout-no-state', async () => {
    const { b, idToken } = await signedInBrowser();
    const res = await logout(b, { id_token_hint: idToken, post_logout_redirect_uri: AFTER });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, AFTER);
  });

  test('oidcc-rp-initiated-logout-only-state', async () => {
    const { b } = await signedInBrowser();
    signedOutPage(await logout(b, { state: 'only' }));
  });

  test('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri', async () => {
    const { b, idToken } = await signedInBrowser();
    const res = await logout(b, {
      id_token_hint: idToken,
      post_logout_redirect_uri: `${AFTER}?tenant=1`,
      state: 'q',
    });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `${AFTER}?tenant=1&state=q`);
  });
});

describe('wallet claims (scope wallet)', () => {
  test('ID token and /userinfo carry wallet_address and wallets with the scope, nothing without it', async () => {
    const b = browser();
    const tokens = await signIn(b, { scope: 'openid wallet' });
    const expected = [{ address: b.wallet.address, chain: 'solana', isPrimary: true }];
    assert.equal(tokens.claims()?.wallet_address, b.wallet.address);
    assert.deepEqual(tokens.claims()?.wallets, expected);
    const info = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    assert.equal(info.wallet_address, b.wallet.address);
    assert.deepEqual(info.wallets, expected);

    const without = await signIn(b, { scope: 'openid profile' });
    assert.equal(without.claims()?.wallet_address, undefined);
    assert.equal(without.claims()?.wallets, undefined);
    const plain = await client.fetchUserInfo(config, without.access_token, without.claims()?.sub as string);
    assert.equal(plain.wallets, undefined);
    assert.equal(plain.wallet_address, undefined);
  });

  test('a user with no wallet gets wallets: [] and no wallet_address', async () => {
    const b = browser();
    const first = await signIn(b, { scope: 'openid wallet' });
    const sub = first.claims()?.sub as string;
    await t.ctx.db.deleteFrom('user_public_keys').where('user_id', '=', sub).execute();
    await userChangedBehindTheApp(t, sub);
    const s = await authorize(b, { scope: 'openid wallet', prompt: 'none' });
    const tokens = await redeem(s, s.location as URL);
    assert.deepEqual(tokens.claims()?.wallets, []);
    assert.equal(tokens.claims()?.wallet_address, undefined);
    const info = await client.fetchUserInfo(config, tokens.access_token, sub);
    assert.deepEqual(info.wallets, []);
  });

  test('the consent screen says "See your wallet addresses"; discovery lists the scope and claims', async () => {
    const b = browser();
    const s = await authorize(b, { scope: 'openid wallet' });
    const id = (s.location as URL).pathname.split('/').pop() as string;
    await walletSignIn(t, id, b.wallet, b.jar);
    const view = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.deepEqual(
      view.json().scopes.find((x: { name: string }) => x.name === 'wallet'),
      { name: 'wallet', description: 'See your wallet addresses' },
    );
    const page = await t.app.inject({
      method: 'GET',
      url: `/signin/${id}`,
      headers: { cookie: cookieHeader(b.jar) },
    });
    assert.ok(page.body.includes('See your wallet addresses'), 'consent page line');
    const m = config.serverMetadata();
    assert.ok(m.scopes_supported?.includes('wallet'));
    assert.ok(m.claims_supported?.includes('wallet_address'));
    assert.ok(m.claims_supported?.includes('wallets'));
  });

  test('an app that does not list wallet in allowedScopes cannot request it', async () => {
    const other = await seedClient(t, { confidential: true, scopes: ['openid', 'profile'] });
    const res = await t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${new URLSearchParams({
        client_id: other.clientId,
        redirect_uri: other.redirectUri,
        response_type: 'code',
        scope: 'openid wallet',
        state: 'st',
      })}`,
    });
    assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_scope');
  });
});
