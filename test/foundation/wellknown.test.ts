import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { buildTestApp, consoleToken, json, type TestApp } from '../helpers/app.js';

describe('discovery and JWKS', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('serves the discovery document with absolute URLs under the issuer', async () => {
    const res = await t.app.inject('/.well-known/openid-configuration');
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['cache-control'] as string, /max-age=3600/);
    const doc = json(res);
    assert.equal(doc.issuer, 'http://gatehouse.test');
    assert.equal(doc.token_endpoint, 'http://gatehouse.test/oauth2/token');
    assert.equal(doc.jwks_uri, 'http://gatehouse.test/.well-known/jwks.json');
    assert.equal(doc.device_authorization_endpoint, 'http://gatehouse.test/oauth2/device/authorize');
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(doc.grant_types_supported, [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
    // Issue 20 and 21: `wallet` and `gates` are standard scopes of the issuer (DESIGN §3 "Sessions,
    // logout and wallet claims", "Gates in tokens").
    assert.deepEqual(doc.scopes_supported, [
      'openid',
      'profile',
      'email',
      'offline_access',
      'wallet',
      'gates',
    ]);
    assert.deepEqual(doc.subject_types_supported, ['public']);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
    assert.ok(doc.claims_supported.includes('preferred_username'));
  });

  it('serves a JWKS that verifies the tokens the service signs', async () => {
    const res = await t.app.inject('/.well-known/jwks.json');
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['cache-control'] as string, /max-age=600/);
    const jwks = json(res);
    assert.equal(jwks.keys.length, 1);
    const [key] = jwks.keys;
    assert.deepEqual(Object.keys(key).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    assert.equal(key.kty, 'RSA');
    assert.equal(key.alg, 'RS256');
    const token = await consoleToken(t, 'usr_x');
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: 'http://gatehouse.test',
      audience: 'console',
      currentDate: t.clock.now(),
    });
    assert.equal(payload.sub, 'usr_x');
    assert.equal(protectedHeader.kid, key.kid);
  });

  it('answers health and readiness', async () => {
    assert.equal((await t.app.inject('/healthz')).statusCode, 200);
    assert.equal((await t.app.inject('/readyz')).statusCode, 200);
  });
});
