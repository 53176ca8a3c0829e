import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadClient } from '../../src/oidc/clients.js';
import { grantConsent, revokeConsentGrant } from '../../src/oidc/consent.js';
import { findConsentGrant } from '../../src/stores/consent-grants.store.js';
import { sweepExpiredSignin } from '../../src/oidc/signin/sweep.js';
import { destroyUserSessions } from '../../src/stores/sessions.store.js';
import { createWalletChallenge } from '../../src/oidc/signin/wallet-challenges.js';
import { defaults } from '../../src/config/defaults.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import {
  type SeededClient,
  authorizeQuery,
  cookieHeader,
  pkce,
  seedClient,
  walletSignIn,
} from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;
let rp: SeededClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  rp = await seedClient(t);
});
after(() => t.close());

const appOf = (c: SeededClient) => ({ appId: c.appId, clientId: c.clientId, orgId: c.orgId });

async function events(type: string, user: string) {
  const rows = await t.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('type', '=', type)
    .orderBy('created_at')
    .execute();
  return rows.filter((r) => (r.data as { user: string }).user === user);
}

/** Signs a new wallet in and allows consent for `scope`; returns the user, cookie jar and code. */
async function signInAndConsent(scope: string, challenge?: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(rp, { scope }, challenge)}`,
  });
  const id = String(res.headers.location).split('/signin/')[1];
  const wallet = createTestWallet();
  const { jar } = await walletSignIn(t, id, wallet);
  const consent = await t.app.inject({
    method: 'POST',
    url: `/interactions/${id}/consent`,
    payload: { decision: 'allow' },
    headers: { cookie: cookieHeader(jar) },
  });
  assert.equal(consent.statusCode, 200, consent.body);
  const { user_id: userId } = await t.ctx.db
    .selectFrom('user_public_keys')
    .select('user_id')
    .where('address', '=', wallet.address)
    .executeTakeFirstOrThrow();
  return { userId, jar, code: new URL(consent.json().redirectTo).searchParams.get('code') as string };
}

function promptNone(jar: Record<string, string>) {
  return t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(rp, { prompt: 'none', scope: 'openid' })}`,
    headers: { cookie: cookieHeader(jar) },
  });
}

describe('consent grants', () => {
  it('grantConsent records the union and reports (and announces) only new scopes', async () => {
    const { userId } = await signInAndConsent('openid');
    const user = { id: userId };
    const again = await t.ctx.db
      .transaction()
      .execute((trx) => grantConsent(t.ctx, trx, { user, app: appOf(rp), scopes: ['openid'] }));
    assert.deepEqual(again, []);
    const more = await t.ctx.db
      .transaction()
      .execute((trx) =>
        grantConsent(t.ctx, trx, { user, app: appOf(rp), scopes: ['openid', 'email', 'profile'] }),
      );
    assert.deepEqual(more, ['email', 'profile']);
    const granted = await events('consent.granted', userId);
    assert.deepEqual(
      granted.map((e) => (e.data as { scopes: string[] }).scopes),
      [['openid'], ['email', 'profile']],
    );
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .selectAll()
      .where('actor_user_id', '=', userId)
      .execute();
    assert.ok(audit.every((a) => a.org_id === rp.orgId && a.action === 'consent.granted'));
    const byApp = await findConsentGrant(t.ctx.db, userId, rp.appId);
    const byClient = await findConsentGrant(t.ctx.db, userId, rp.clientId);
    assert.equal(byApp?.id, byClient?.id);
    assert.deepEqual(byApp?.scopes.sort(), ['email', 'openid', 'profile']);
  });

  it('concurrent grants of the same new scope announce it once', async () => {
    const { userId } = await signInAndConsent('openid');
    const grant = () =>
      t.ctx.db
        .transaction()
        .execute((trx) =>
          grantConsent(t.ctx, trx, { user: { id: userId }, app: appOf(rp), scopes: ['openid', 'email'] }),
        );
    const results = await Promise.all([grant(), grant(), grant()]);
    assert.deepEqual(results.flat(), ['email']);
    assert.equal((await events('consent.granted', userId)).length, 2);
  });

  it('revokeConsentGrant deletes the grant, revokes its tokens, fires consent.revoked, and consent is asked again', async () => {
    const { verifier, challenge } = pkce();
    const { userId, jar, code } = await signInAndConsent('openid offline_access', challenge);
    const tokens = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: rp.redirectUri,
        client_id: rp.clientId,
        code_verifier: verifier,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(tokens.statusCode, 200, tokens.body);
    const refresh = tokens.json().refresh_token as string;
    assert.ok(refresh);

    const revoked = await t.ctx.db
      .transaction()
      .execute((trx) => revokeConsentGrant(t.ctx, trx, { userId, appId: rp.clientId, actorUserId: userId }));
    assert.equal(revoked, true);
    assert.equal(await findConsentGrant(t.ctx.db, userId, rp.appId), null);
    const [event] = await events('consent.revoked', userId);
    assert.deepEqual(event.data, { user: userId, app: rp.clientId, scopes: ['openid', 'offline_access'] });

    const refreshed = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: rp.clientId,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(refreshed.statusCode, 400);
    assert.equal(refreshed.json().error, 'invalid_grant');

    const none = await promptNone(jar);
    assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'consent_required');

    const twice = await t.ctx.db
      .transaction()
      .execute((trx) => revokeConsentGrant(t.ctx, trx, { userId, appId: rp.clientId, actorUserId: userId }));
    assert.equal(twice, false);
  });

  it('destroyUserSessions signs the user out of every brand', async () => {
    const { userId, jar } = await signInAndConsent('openid');
    const ok = await promptNone(jar);
    assert.ok(new URL(String(ok.headers.location)).searchParams.get('code'));
    assert.equal(await t.ctx.db.transaction().execute((trx) => destroyUserSessions(trx, userId)), 1);
    const none = await promptNone(jar);
    assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'login_required');
  });

  it('a session expires after sessionTtl', async () => {
    const { jar } = await signInAndConsent('openid');
    t.clock.advance(defaults.sessionTtl + 1);
    const none = await promptNone(jar);
    assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'login_required');
  });
});

describe('sign-in sweeper', () => {
  it('deletes expired challenges, interactions and sessions, and keeps live ones', async () => {
    const { userId } = await signInAndConsent('openid');
    const client = await loadClient(t.ctx, rp.clientId);
    assert.ok(client);
    await createWalletChallenge(t.ctx, {
      address: createTestWallet().address,
      brand: { id: rp.brandId, slug: rp.brandSlug, name: rp.brandName },
      purpose: 'signin',
    });
    t.clock.advance(defaults.sessionTtl + 1);
    await t.app.inject({ method: 'GET', url: `/oauth2/authorize?${authorizeQuery(rp)}` });
    const swept = await sweepExpiredSignin(t.ctx);
    assert.ok(swept.challenges >= 1);
    assert.ok(swept.interactions >= 1);
    assert.ok(swept.sessions >= 1);
    const live = await t.ctx.db.selectFrom('interactions').select('id').execute();
    assert.equal(live.length, 1, 'the interaction started after the clock moved survives');
    const sessions = await t.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', userId)
      .execute();
    assert.equal(sessions.length, 0);
  });
});
