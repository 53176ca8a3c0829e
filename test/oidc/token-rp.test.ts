import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { ManualClock } from '../../src/lib/clock.js';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import { approveDevice } from '../../src/oidc/device-store.js';
import { type TestApp, type TestUser, buildTestApp, createUser } from '../helpers/app.js';
import {
  DEVICE_GRANT,
  type TestBrand,
  type TestClient,
  clientOf,
  createApp,
  createBrand,
  freePort,
  setProfile,
} from '../helpers/oidc.js';

// openid-client checks ID-token times against the real clock, so this app's clock starts now.
let t: TestApp;
let issuer: URL;
let brand: TestBrand;
let rp: TestClient;
let user: TestUser;
let config: client.Configuration;

const insecure = { execute: [client.allowInsecureRequests] };

before(async () => {
  const port = await freePort();
  t = await buildTestApp({
    env: { BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_MULTIPLIER: '1000' },
    clock: new ManualClock(Date.now()),
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  issuer = new URL(`http://127.0.0.1:${port}`);
  brand = await createBrand(t);
  rp = await createApp(t, brand);
  user = await createUser(t);
  await setProfile(t, user.id, { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' });
  config = await client.discovery(issuer, rp.clientId, rp.clientSecret, undefined, insecure);
});
after(() => t.close());

async function codeFlow(scopes: string[], nonce?: string) {
  const verifier = client.randomPKCECodeVerifier();
  const code = await issueAuthorizationCode(t.ctx, {
    client: await clientOf(t, rp),
    userId: user.id,
    redirectUri: rp.redirectUri,
    scopes,
    nonce,
    codeChallenge: await client.calculatePKCECodeChallenge(verifier),
    authTime: t.clock.nowSec(),
  });
  const callback = new URL(rp.redirectUri);
  callback.searchParams.set('code', code);
  callback.searchParams.set('state', 'st');
  callback.searchParams.set('iss', t.ctx.config.issuer);
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: 'st',
    expectedNonce: nonce,
  });
}

describe('openid-client as the relying party', () => {
  test('discovery names our endpoints', () => {
    const m = config.serverMetadata();
    assert.equal(m.issuer, t.ctx.config.issuer);
    assert.equal(m.token_endpoint, `${t.ctx.config.issuer}/oauth2/token`);
    assert.equal(m.device_authorization_endpoint, `${t.ctx.config.issuer}/oauth2/device/authorize`);
  });

  test('client credentials: a JWT for the brand with the client as subject', async () => {
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'orders:read');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.id_token, undefined);
    const intro = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(intro.active, true);
    assert.equal(intro.sub, rp.clientId);
    assert.equal(intro.aud, brand.slug);
    assert.equal(intro.client_id, rp.clientId);
  });

  test('code flow with PKCE and nonce, ID token validated, then refresh with rotation', async () => {
    const tokens = await codeFlow(['openid', 'profile', 'offline_access'], 'nonce-123');
    const claims = tokens.claims();
    assert.equal(claims?.sub, user.id);
    assert.equal(claims?.given_name, 'Grace');
    assert.ok(tokens.refresh_token);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
    assert.ok(refreshed.refresh_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal(refreshed.claims()?.sub, user.id);
    await assert.rejects(
      client.refreshTokenGrant(config, tokens.refresh_token),
      (e: Error & { error?: string }) => {
        return e.error === 'invalid_grant';
      },
    );
  });

  test('userinfo: profile claims, never email', async () => {
    const tokens = await codeFlow(['openid', 'profile', 'email']);
    const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
    assert.deepEqual(info, {
      sub: user.id,
      preferred_username: user.username,
      given_name: 'Grace',
      family_name: 'Hopper',
    });
  });

  test('introspection of an access token and a refresh token, then revocation', async () => {
    const tokens = await codeFlow(['openid', 'offline_access', 'orders:read']);
    const at = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(at.active, true);
    assert.equal(at.sub, user.id);
    assert.equal(at.scope, 'openid offline_access orders:read');
    assert.equal(at.token_type, 'Bearer');
    assert.equal(at.iss, t.ctx.config.issuer);
    const rt = await client.tokenIntrospection(config, tokens.refresh_token as string);
    assert.equal(rt.active, true);
    assert.equal(rt.token_type, 'refresh_token');

    await client.tokenRevocation(config, tokens.refresh_token as string);
    assert.deepEqual(await client.tokenIntrospection(config, tokens.refresh_token as string), {
      active: false,
    });
    // Revoking the refresh token takes its family's access tokens with it.
    assert.deepEqual(await client.tokenIntrospection(config, tokens.access_token), { active: false });
  });

  test('device flow: authorize, pending, approve, tokens once', async () => {
    const device = await createApp(t, brand, {
      confidential: false,
      grants: [DEVICE_GRANT, 'refresh_token'],
    });
    const dconfig = await client.discovery(issuer, device.clientId, undefined, client.None(), insecure);
    const auth = await client.initiateDeviceAuthorization(dconfig, { scope: 'openid profile' });
    assert.match(auth.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(auth.verification_uri, `${t.ctx.config.baseUrl}/device`);
    assert.equal(
      auth.verification_uri_complete,
      `${t.ctx.config.baseUrl}/device?user_code=${auth.user_code}`,
    );
    assert.equal(auth.expires_in, 600);
    assert.equal(auth.interval, 5);

    const poll = () => client.genericGrantRequest(dconfig, DEVICE_GRANT, { device_code: auth.device_code });
    await assert.rejects(poll(), (e: Error & { error?: string }) => e.error === 'authorization_pending');
    assert.equal(await approveDevice(t.ctx, auth.user_code, user.id, t.clock.nowSec()), true);
    t.clock.advance(5);
    const tokens = await poll();
    assert.equal(tokens.scope, 'openid profile');
    assert.equal(tokens.claims()?.sub, user.id);
    t.clock.advance(5);
    await assert.rejects(poll(), (e: Error & { error?: string }) => e.error === 'invalid_grant');
  });
});
