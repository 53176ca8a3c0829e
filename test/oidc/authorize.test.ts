import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import {
  type SeededClient,
  authorizeQuery,
  cookieHeader,
  pkce,
  randomIp,
  seedClient,
  walletSignIn,
} from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;
let pub: SeededClient;
let conf: SeededClient;
let noCode: SeededClient;

const BASE = 'http://gatehouse.test';

before(async () => {
  t = await buildTestApp();
  pub = await seedClient(t, {
    redirectUris: ['https://app.example.com/callback', 'https://app.example.com/cb?tenant=1'],
  });
  conf = await seedClient(t, { confidential: true, brandId: pub.brandId, orgId: pub.orgId });
  noCode = await seedClient(t, {
    grantTypes: ['client_credentials'],
    brandId: pub.brandId,
    orgId: pub.orgId,
  });
});
after(() => t.close());

function get(query: string, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${query}`,
    headers,
    remoteAddress: randomIp(),
  });
}

/** An error shown on our page: 400, HTML, never a redirect. */
async function assertPageError(query: string, error: string) {
  const res = await get(query);
  assert.equal(res.statusCode, 400, `${query} → ${res.statusCode} ${res.headers.location ?? ''}`);
  assert.equal(res.headers.location, undefined);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.ok(res.body.includes(`id="error-code">${error}<`), res.body);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  const asJson = await get(query, { accept: 'application/json' });
  assert.equal(asJson.statusCode, 400);
  assert.equal(asJson.json().error, error);
  assert.equal(typeof asJson.json().error_description, 'string');
}

/** An error sent back to the client's redirect URI with state and iss. */
async function assertRedirectError(query: string, error: string, state: string | null = 'st') {
  const res = await get(query);
  assert.equal(res.statusCode, 302, res.body);
  const loc = new URL(res.headers.location as string);
  assert.equal(`${loc.origin}${loc.pathname}`, 'https://app.example.com/callback');
  assert.equal(loc.searchParams.get('error'), error);
  assert.ok(loc.searchParams.get('error_description'));
  assert.equal(loc.searchParams.get('state'), state);
  assert.equal(loc.searchParams.get('iss'), BASE);
  assert.equal(loc.searchParams.get('code'), null);
}

describe('authorize: client and redirect URI errors are shown, never redirected', () => {
  it('missing or unknown client_id', async () => {
    await assertPageError(authorizeQuery(pub, { client_id: null }), 'invalid_request');
    await assertPageError(authorizeQuery(pub, { client_id: 'nope' }), 'invalid_client');
  });

  it('missing redirect_uri', async () => {
    await assertPageError(authorizeQuery(pub, { redirect_uri: null }), 'invalid_request');
  });

  for (const [why, uri] of [
    ['a trailing slash', 'https://app.example.com/callback/'],
    ['case', 'https://APP.example.com/callback'],
    ['path case', 'https://app.example.com/Callback'],
    ['a port', 'https://app.example.com:443/callback'],
    ['another port', 'https://app.example.com:8443/callback'],
    ['a query', 'https://app.example.com/callback?x=1'],
    ['userinfo', 'https://user@app.example.com/callback'],
    ['scheme', 'http://app.example.com/callback'],
    ['a fragment', 'https://app.example.com/callback#f'],
  ] as const) {
    it(`a redirect_uri differing by ${why}`, async () => {
      await assertPageError(authorizeQuery(pub, { redirect_uri: uri }), 'invalid_request');
    });
  }

  it('a redirect URI of another client', async () => {
    const stranger = await seedClient(t, { redirectUris: ['https://other.example.com/cb'] });
    await assertPageError(authorizeQuery(pub, { redirect_uri: stranger.redirectUri }), 'invalid_request');
  });

  it('duplicate client_id or redirect_uri', async () => {
    await assertPageError(`${authorizeQuery(pub)}&client_id=${pub.clientId}`, 'invalid_request');
    await assertPageError(
      `${authorizeQuery(pub)}&redirect_uri=${encodeURIComponent(pub.redirectUri)}`,
      'invalid_request',
    );
  });
});

describe('authorize: other errors go back to the redirect URI with state and iss', () => {
  it('duplicate parameters', async () => {
    await assertRedirectError(`${authorizeQuery(pub, { state: 'st' })}&scope=openid`, 'invalid_request');
    await assertRedirectError(`${authorizeQuery(pub, { state: 'st' })}&nonce=x`, 'invalid_request');
    // A duplicated state cannot be echoed.
    await assertRedirectError(`${authorizeQuery(pub, { state: 'st' })}&state=other`, 'invalid_request', null);
  });

  it('response_type missing or not code', async () => {
    await assertRedirectError(authorizeQuery(pub, { state: 'st', response_type: null }), 'invalid_request');
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', response_type: 'token' }),
      'unsupported_response_type',
    );
  });

  it('a response_mode other than query (the only one discovery lists) is invalid_request', async () => {
    for (const mode of ['form_post', 'fragment', 'bogus'])
      await assertRedirectError(authorizeQuery(pub, { state: 'st', response_mode: mode }), 'invalid_request');
    const query = await get(authorizeQuery(pub, { state: 'st', response_mode: 'query' }));
    assert.equal(query.statusCode, 302);
    assert.ok(sessionStart(query).id, 'query is the default, accepted by name');
  });

  it('an app without the authorization_code grant: unauthorized_client', async () => {
    await assertRedirectError(authorizeQuery(noCode, { state: 'st' }), 'unauthorized_client');
  });

  it('state missing', async () => {
    await assertRedirectError(authorizeQuery(pub, { state: null }), 'invalid_request', null);
  });

  it('scope missing, unknown or not allowed: invalid_request / invalid_scope', async () => {
    await assertRedirectError(authorizeQuery(pub, { state: 'st', scope: null }), 'invalid_request');
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', scope: 'openid nonsense' }),
      'invalid_scope',
    );
    const narrow = await seedClient(t, { scopes: ['openid'], brandId: pub.brandId, orgId: pub.orgId });
    await assertRedirectError(
      authorizeQuery(narrow, { state: 'st', scope: 'openid email' }),
      'invalid_scope',
    );
  });

  it('PKCE: required for public clients, S256 only, plain refused', async () => {
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', code_challenge: null, code_challenge_method: null }),
      'invalid_request',
    );
    const { verifier } = pkce();
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', code_challenge: verifier, code_challenge_method: 'plain' }),
      'invalid_request',
    );
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', code_challenge_method: null }),
      'invalid_request',
    );
    await assertRedirectError(authorizeQuery(pub, { state: 'st', code_challenge: null }), 'invalid_request');
    await assertRedirectError(
      authorizeQuery(pub, { state: 'st', code_challenge: 'too-short' }),
      'invalid_request',
    );
  });

  it('PKCE is optional for confidential clients but S256-only when sent', async () => {
    const ok = await get(authorizeQuery(conf, { code_challenge: null, code_challenge_method: null }));
    assert.equal(ok.statusCode, 302);
    assert.match(ok.headers.location as string, /^http:\/\/gatehouse\.test\/signin\//);
    const plain = await get(authorizeQuery(conf, { state: 'st', code_challenge_method: 'plain' }));
    assert.equal(new URL(plain.headers.location as string).searchParams.get('error'), 'invalid_request');
  });

  it('an unknown prompt or provider', async () => {
    await assertRedirectError(authorizeQuery(pub, { state: 'st', prompt: 'sometimes' }), 'invalid_request');
    await assertRedirectError(authorizeQuery(pub, { state: 'st', prompt: 'none login' }), 'invalid_request');
    await assertRedirectError(authorizeQuery(pub, { state: 'st', provider: 'myspace' }), 'invalid_request');
  });

  it('prompt=none without a session: login_required', async () => {
    await assertRedirectError(authorizeQuery(pub, { state: 'st', prompt: 'none' }), 'login_required');
  });

  it('keeps the registered redirect URI’s own query', async () => {
    const res = await get(
      authorizeQuery(pub, {
        redirect_uri: 'https://app.example.com/cb?tenant=1',
        state: 'st',
        scope: 'bogus',
      }),
    );
    const loc = new URL(res.headers.location as string);
    assert.equal(loc.searchParams.get('tenant'), '1');
    assert.equal(loc.searchParams.get('error'), 'invalid_scope');
  });
});

describe('authorize: prompt with a session', () => {
  it('none with a session but no consent: consent_required; with consent: a code', async () => {
    const { id } = sessionStart(await get(authorizeQuery(pub)));
    const { jar } = await walletSignIn(t, id, createTestWallet());
    const none = await get(authorizeQuery(pub, { state: 'st', prompt: 'none' }), {
      cookie: cookieHeader(jar),
    });
    const loc = new URL(none.headers.location as string);
    assert.equal(loc.searchParams.get('error'), 'consent_required');
    assert.equal(loc.searchParams.get('state'), 'st');

    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(consent.statusCode, 200);
    const ok = await get(authorizeQuery(pub, { state: 'st2', prompt: 'none' }), {
      cookie: cookieHeader(jar),
    });
    const okLoc = new URL(ok.headers.location as string);
    assert.ok(okLoc.searchParams.get('code'));
    assert.equal(okLoc.searchParams.get('state'), 'st2');
    assert.equal(okLoc.searchParams.get('iss'), BASE);

    // login forces a new sign-in; consent forces the consent step; select_account shows the chooser;
    // a space-delimited set does each (OIDC Core §3.1.2.1).
    for (const [prompt, step] of [
      ['login', 'signin'],
      ['consent', 'consent'],
      ['select_account', 'signin'],
      ['login consent', 'signin'],
      ['consent select_account', 'signin'],
    ] as const) {
      const res = await get(authorizeQuery(pub, { prompt }), { cookie: cookieHeader(jar) });
      const interaction = sessionStart(res).id;
      const view = await t.app.inject({ method: 'GET', url: `/interactions/${interaction}` });
      assert.equal(view.json().step, step, prompt);
    }
  });
});

describe('authorize: POST (OIDC Core §3.1.2.1)', () => {
  const post = (form: string, cookie?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth2/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      payload: form,
      remoteAddress: randomIp(),
    });

  it('a post without the session (a cross-site form post) comes back as the same GET, which has it', async () => {
    const form = `${authorizeQuery(pub, { state: 'p1', prompt: 'none' })}&ui_locales=fr&ui_locales=de`;
    const res = await post(form);
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const to = new URL(String(res.headers.location));
    assert.equal(`${to.origin}${to.pathname}`, `${BASE}/oauth2/authorize`);
    assert.deepEqual(
      [...to.searchParams],
      [...new URLSearchParams(form)],
      'every parameter, repeated ones too',
    );
  });

  it('a post that brings the session is answered at once: single sign-on with prompt=none', async () => {
    const { id } = sessionStart(await get(authorizeQuery(pub)));
    const { jar } = await walletSignIn(t, id, createTestWallet());
    await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(jar) },
    });
    const res = await post(authorizeQuery(pub, { state: 'p2', prompt: 'none' }), cookieHeader(jar));
    assert.equal(res.statusCode, 302, res.body);
    assert.ok(new URL(String(res.headers.location)).searchParams.get('code'));
  });
});

describe('authorize: max_age and prompt=login (OIDC Core §3.1.2.1)', () => {
  /** A silent authorize with the session, redeemed: the ID token's claims (or where it went instead). */
  async function silent(jar: Record<string, string>, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce();
    const res = await get(authorizeQuery(pub, { state: 'st', ...extra }, challenge), {
      cookie: cookieHeader(jar),
    });
    assert.equal(res.statusCode, 302, res.body);
    const loc = new URL(res.headers.location as string);
    const code = loc.searchParams.get('code');
    if (!code) return { location: loc };
    const tok = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: pub.redirectUri,
        client_id: pub.clientId,
        code_verifier: verifier,
      }).toString(),
    });
    assert.equal(tok.statusCode, 200, tok.body);
    return {
      location: loc,
      idToken: decodeJwt(tok.json().id_token),
      accessToken: decodeJwt(tok.json().access_token),
    };
  }

  it('a session older than max_age forces a fresh sign-in; auth_time stays the session’s across silent sign-ins', async () => {
    const { id } = sessionStart(await get(authorizeQuery(pub)));
    const wallet = createTestWallet();
    const { jar } = await walletSignIn(t, id, wallet);
    const signedInAt = t.clock.nowSec();
    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(consent.statusCode, 200);

    t.clock.advance(120);
    const first = await silent(jar);
    assert.equal(first.idToken?.auth_time, signedInAt);
    t.clock.advance(30);
    const second = await silent(jar, { max_age: '3600' });
    assert.equal(second.idToken?.auth_time, signedInAt, 'stable across silent sign-ins of one session');
    assert.equal(second.accessToken?.auth_time, signedInAt);

    // The session is 150 s old: max_age=0 and max_age=100 need a new sign-in, never a silent code.
    for (const maxAge of ['0', '100']) {
      const res = await silent(jar, { max_age: maxAge });
      assert.equal(res.idToken, undefined, `max_age=${maxAge} returned a code silently`);
      assert.match(res.location.pathname, /^\/signin\//);
      const view = await t.app.inject({
        method: 'GET',
        url: res.location.pathname.replace('/signin/', '/interactions/'),
      });
      assert.equal(view.json().step, 'signin');
    }
    // With prompt=none a stale session cannot sign in silently: login_required, back to the app.
    const none = await silent(jar, { max_age: '0', prompt: 'none' });
    assert.equal(none.location.searchParams.get('error'), 'login_required');
    assert.equal(none.location.searchParams.get('state'), 'st');
    const login = await silent(jar, { prompt: 'login' });
    assert.match(login.location.pathname, /^\/signin\//);

    // Signing in again (same wallet, max_age=0) gives a new auth_time.
    const fresh = sessionStart(
      await get(authorizeQuery(pub, { max_age: '0' }), { cookie: cookieHeader(jar) }),
    );
    t.clock.advance(5);
    const again = await walletSignIn(t, fresh.id, wallet, jar);
    assert.equal(again.res.statusCode, 200, again.res.body);
    const after = await silent(jar, { max_age: '60' });
    assert.equal(after.idToken?.auth_time, t.clock.nowSec());
  });

  it('a max_age that is not a non-negative integer is invalid_request', async () => {
    for (const bad of ['-1', 'soon', '1.5', '99999999999999999999']) {
      const res = await get(authorizeQuery(pub, { state: 'st', max_age: bad }));
      const loc = new URL(res.headers.location as string);
      assert.equal(loc.searchParams.get('error'), 'invalid_request', bad);
    }
  });
});

describe('authorize: rate limit', () => {
  it('answers 429 after 60 requests a minute from one IP', async () => {
    const ip = randomIp();
    const q = authorizeQuery(pub);
    let last = await t.app.inject({ method: 'GET', url: `/oauth2/authorize?${q}`, remoteAddress: ip });
    assert.equal(last.headers['ratelimit-limit'], '60');
    for (let i = 0; i < 60; i++) {
      last = await t.app.inject({ method: 'GET', url: `/oauth2/authorize?client_id=x`, remoteAddress: ip });
    }
    assert.equal(last.statusCode, 429);
    assert.ok(last.headers['retry-after']);
  });

  it('limits wallet challenges and proofs to 30 a minute per IP (signinWallet)', async () => {
    const ip = randomIp();
    const address = createTestWallet().address;
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const path = i % 2 ? 'wallet/verify' : 'wallet/challenge';
      const payload = i % 2 ? { address, signature: 'AAAA', signedMessage: 'AAAA' } : { address };
      const res = await t.app.inject({
        method: 'POST',
        url: `/interactions/nope${i}/${path}`,
        payload,
        remoteAddress: ip,
      });
      statuses.push(res.statusCode);
    }
    assert.ok(statuses.slice(0, 30).every((s) => s === 404 || s === 400));
    assert.equal(statuses[30], 429);
  });
});

function sessionStart(res: { statusCode: number; headers: Record<string, unknown> }): { id: string } {
  assert.equal(res.statusCode, 302);
  const m = String(res.headers.location).match(/\/signin\/([A-Za-z0-9]+)$/);
  assert.ok(m, String(res.headers.location));
  return { id: m[1] };
}
