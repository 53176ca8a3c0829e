import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { AppContext } from '../../src/context.js';
import { OAuthError } from '../../src/http/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import { sha256, sha256b64url } from '../../src/lib/hash.js';
import type { Client } from '../../src/oidc/clients.js';
import { issueAuthorizationCode } from '../../src/oidc/codes.js';
import { grantConsent, revokeConsentGrant } from '../../src/oidc/consent.js';
import {
  approveDevice,
  createDeviceAuthorization,
  denyDevice,
  pollDevice,
} from '../../src/oidc/device-store.js';
import { authorizationCodeGrant } from '../../src/oidc/grant-authorization-code.js';
import type { GrantRequest, TokenRequestBody } from '../../src/oidc/grant.js';
import { refreshTokenGrant } from '../../src/oidc/grant-refresh-token.js';
import { revocationCheck, sweepExpiredTokens } from '../../src/oidc/revocation.js';
import { revokeToken } from '../../src/oidc/revoke.js';
import type { Tx } from '../../src/oidc/stores.js';
import { type MemoryData, memoryEngine } from './memory-stores.js';

/**
 * The engine on in-memory stores (test/oidc/memory-stores.ts): code issuance and redemption,
 * refresh rotation and reuse detection, revocation, consent and the device flow, with no database.
 */

const VERIFIER = 'v'.repeat(43);
const REDIRECT = 'https://rp.test/cb';

const client: Client = {
  appId: 'app_1',
  clientId: 'client_1',
  orgId: 'org_1',
  orgSlug: 'acme',
  brandId: 'brd_1',
  brandSlug: 'acme',
  brandName: 'Acme',
  name: 'RP',
  type: 'web',
  isConfidential: true,
  firstParty: false,
  redirectUris: [REDIRECT],
  allowedGrantTypes: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
  allowedScopes: ['openid', 'profile', 'offline_access'],
  secretHash: sha256('secret'),
};

let clock: ManualClock;
let ctx: AppContext;
let data: MemoryData;

beforeEach(async () => {
  clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  ({ ctx, data } = await memoryEngine(clock));
  data.clients.set(client.clientId, client);
  data.users.set('usr_1', {
    id: 'usr_1',
    username: 'ada',
    givenName: 'Ada',
    familyName: null,
    picture: null,
    locale: null,
    email: null,
    emailVerified: false,
  });
});

function grantRequest(body: TokenRequestBody): GrantRequest {
  return { ctx, req: {} as GrantRequest['req'], client, body };
}

async function newCode(scopes = ['openid', 'profile', 'offline_access']): Promise<string> {
  return issueAuthorizationCode(ctx, {
    client,
    userId: 'usr_1',
    redirectUri: REDIRECT,
    scopes,
    codeChallenge: sha256b64url(VERIFIER),
    authTime: clock.nowSec(),
  });
}

const redeem = (code: string, extra: TokenRequestBody = {}) =>
  authorizationCodeGrant.handler(
    grantRequest({ code, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...extra }),
  );
const refresh = (token: string) => refreshTokenGrant.handler(grantRequest({ refresh_token: token }));

async function rejects(p: Promise<unknown>, error: string): Promise<void> {
  await assert.rejects(p, (err) => err instanceof OAuthError && err.error === error);
}

describe('authorization codes', () => {
  it('redeems once for an access token, an ID token and a refresh token', async () => {
    const out = await redeem(await newCode());
    assert.equal(decodeJwt(out.access_token).sub, 'usr_1');
    assert.equal(decodeJwt(out.id_token!).aud, client.clientId);
    assert.ok(out.refresh_token);
    assert.equal(data.access.size, 1);
    assert.equal(data.mutations[0].action, 'token.issued');
  });

  it('refuses a wrong redirect URI or verifier without burning the code', async () => {
    const code = await newCode();
    await rejects(redeem(code, { redirect_uri: 'https://rp.test/other' }), 'invalid_grant');
    await rejects(redeem(code, { code_verifier: 'w'.repeat(43) }), 'invalid_grant');
    assert.ok((await redeem(code)).access_token);
  });

  it('a second redemption revokes what the first one issued', async () => {
    const code = await newCode();
    const first = await redeem(code);
    await rejects(redeem(code), 'invalid_grant');
    const jti = decodeJwt(first.access_token).jti as string;
    assert.ok(data.revoked.has(jti));
    await rejects(refresh(first.refresh_token!), 'invalid_grant');
  });

  it('an expired code is refused', async () => {
    const code = await newCode();
    clock.advance(61);
    await rejects(redeem(code), 'invalid_grant');
  });
});

describe('refresh tokens', () => {
  it('rotate: the new token refreshes, the old one is reuse and revokes the family', async () => {
    const first = await redeem(await newCode());
    const second = await refresh(first.refresh_token!);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(data.mutations.at(-1)?.action, 'token.refreshed');
    await rejects(refresh(first.refresh_token!), 'invalid_grant');
    await rejects(refresh(second.refresh_token!), 'invalid_grant');
    assert.ok(data.revoked.has(decodeJwt(second.access_token).jti as string));
  });

  it('may narrow the scope but not widen it', async () => {
    const first = await redeem(await newCode(['openid', 'offline_access']));
    await rejects(
      refreshTokenGrant.handler(grantRequest({ refresh_token: first.refresh_token!, scope: 'profile' })),
      'invalid_scope',
    );
    const narrowed = await refreshTokenGrant.handler(
      grantRequest({ refresh_token: first.refresh_token!, scope: 'offline_access' }),
    );
    assert.equal(narrowed.scope, 'offline_access');
  });
});

describe('revocation', () => {
  it('revoking a refresh token revokes its family; the access-token check then refuses', async () => {
    const out = await redeem(await newCode());
    const claims = decodeJwt(out.access_token);
    const check = revocationCheck(ctx);
    assert.equal(await check(claims), true);
    await revokeToken(ctx, client, out.refresh_token!, 'refresh_token');
    assert.equal(await check(claims), false);
    await rejects(refresh(out.refresh_token!), 'invalid_grant');
  });

  it('revoking an access token records its jti until it expires; the sweep then forgets it', async () => {
    const out = await redeem(await newCode(['openid']));
    const jti = decodeJwt(out.access_token).jti as string;
    await revokeToken(ctx, client, out.access_token);
    assert.ok(data.revoked.has(jti));
    clock.advance(3600 * 24 * 2);
    await sweepExpiredTokens(ctx);
    assert.equal(data.revoked.has(jti), false);
    assert.equal(data.codes.size, 0);
  });

  it('a deleted user’s token fails the check', async () => {
    const claims = decodeJwt((await redeem(await newCode(['openid']))).access_token);
    data.users.get('usr_1')!.deleted = true;
    assert.equal(await revocationCheck(ctx)(claims), false);
  });
});

describe('consent', () => {
  const app = { appId: client.appId, clientId: client.clientId, orgId: client.orgId };
  const tx = {} as Tx;

  it('keeps the union and reports only new scopes; revoking it revokes the tokens', async () => {
    assert.deepEqual(await grantConsent(ctx, tx, { user: { id: 'usr_1' }, app, scopes: ['openid'] }), [
      'openid',
    ]);
    assert.deepEqual(
      await grantConsent(ctx, tx, { user: { id: 'usr_1' }, app, scopes: ['openid', 'profile'] }),
      ['profile'],
    );
    const out = await redeem(await newCode());
    assert.equal(
      await revokeConsentGrant(ctx, tx, { userId: 'usr_1', appId: client.clientId, actorUserId: 'usr_1' }),
      true,
    );
    assert.equal(data.consent.size, 0);
    await rejects(refresh(out.refresh_token!), 'invalid_grant');
    assert.deepEqual(
      data.mutations.map((m) => m.action).filter((a) => a.startsWith('consent')),
      ['consent.granted', 'consent.granted', 'consent.revoked'],
    );
  });
});

describe('device authorization', () => {
  it('pending, slow_down, approved once, then invalid', async () => {
    const d = await createDeviceAuthorization(ctx, client, ['openid']);
    assert.equal((await pollDevice(ctx, d.deviceCode, client.clientId)).kind, 'pending');
    assert.equal((await pollDevice(ctx, d.deviceCode, client.clientId)).kind, 'slow_down');
    assert.equal(await approveDevice(ctx, d.userCode, 'usr_1', clock.nowSec()), true);
    assert.equal(await approveDevice(ctx, d.userCode, 'usr_1', clock.nowSec()), false, 'only once');
    clock.advance(d.interval + 5);
    const approved = await pollDevice(ctx, d.deviceCode, client.clientId);
    assert.equal(approved.kind, 'approved');
    clock.advance(d.interval + 5);
    assert.equal((await pollDevice(ctx, d.deviceCode, client.clientId)).kind, 'invalid');
  });

  it('denied, another client’s poll, and expiry', async () => {
    const d = await createDeviceAuthorization(ctx, client, ['openid']);
    assert.equal((await pollDevice(ctx, d.deviceCode, 'someone_else')).kind, 'invalid');
    assert.equal(await denyDevice(ctx, d.userCode), true);
    assert.equal((await pollDevice(ctx, d.deviceCode, client.clientId)).kind, 'denied');
    const e = await createDeviceAuthorization(ctx, client, ['openid']);
    clock.advance(d.expiresIn + 1);
    assert.equal((await pollDevice(ctx, e.deviceCode, client.clientId)).kind, 'expired');
    assert.equal(await approveDevice(ctx, e.userCode, 'usr_1', clock.nowSec()), false);
  });
});
