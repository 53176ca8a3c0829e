import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { refresh, signInToApp } from '../users/flow.js';
import { createTestWallet } from '../helpers/wallet.js';

/**
 * A single-page app on its own origin (a public client) redeems its code, refreshes, revokes and
 * reads claims from the browser: those endpoints answer preflights and let any origin read every
 * answer, errors included. Nothing else grants a preflight (the interaction routes rely on it).
 */
let t: TestApp;
let spa: SeededClient;
const ORIGIN = 'https://spa.example.com';

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  spa = await seedClient(t, { firstParty: true, confidential: false });
});
after(() => t.close());

function preflight(url: string, method: string, headers = 'authorization, content-type') {
  return t.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin: ORIGIN,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  });
}

function readable(res: { headers: Record<string, unknown> }) {
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.equal(res.headers['access-control-allow-credentials'], undefined, 'never with credentials');
}

describe('CORS for the endpoints a single-page app calls', () => {
  test('preflights of the token, revocation and userinfo endpoints are granted', async () => {
    for (const [url, method] of [
      ['/oauth2/token', 'POST'],
      ['/oauth2/revoke', 'POST'],
      ['/userinfo', 'GET'],
      ['/userinfo', 'POST'],
    ] as const) {
      const res = await preflight(url, method);
      assert.equal(res.statusCode, 204, `${url}: ${res.body}`);
      readable(res);
      assert.ok(String(res.headers['access-control-allow-methods']).includes(method), url);
      assert.match(String(res.headers['access-control-allow-headers']), /authorization/);
      assert.match(String(res.headers['access-control-allow-headers']), /content-type/);
    }
  });

  test('a public client signs in, refreshes and reads claims; every answer is readable, errors too', async () => {
    const signedIn = await signInToApp(t, spa, createTestWallet());
    const rotated = await refresh(t, spa, signedIn.refreshToken);
    assert.equal(rotated.statusCode, 200, rotated.body);
    readable(rotated);
    const claims = await t.app.inject({
      url: '/userinfo',
      headers: { origin: ORIGIN, authorization: `Bearer ${rotated.json().access_token}` },
    });
    assert.equal(claims.statusCode, 200, claims.body);
    readable(claims);
    const refused = await t.app.inject({
      url: '/userinfo',
      headers: { origin: ORIGIN, authorization: 'Bearer not-a-token' },
    });
    assert.equal(refused.statusCode, 401);
    readable(refused);
    assert.match(String(refused.headers['access-control-expose-headers']), /WWW-Authenticate/);
    const reused = await refresh(t, spa, signedIn.refreshToken);
    assert.equal(reused.statusCode, 400);
    readable(reused);
  });

  test('the bulk gate check (a JSON POST) is preflighted too', async () => {
    const res = await preflight('/identity/organizations/any-org/token-gates/check', 'POST', 'content-type');
    assert.equal(res.statusCode, 204, res.body);
    readable(res);
  });

  test('no other route grants a preflight: a foreign page still cannot send the sign-in API JSON', async () => {
    for (const url of [
      '/interactions/abc/wallet/challenge',
      '/interactions/abc/wallet/verify',
      '/oauth2/introspect',
      '/users/me',
    ]) {
      const res = await preflight(url, 'POST', 'content-type');
      assert.equal(res.headers['access-control-allow-origin'], undefined, url);
      assert.notEqual(res.statusCode, 204, url);
    }
  });
});
