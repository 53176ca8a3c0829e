import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { ManualClock } from '../../src/lib/clock.js';
import { claimDue } from '../../src/modules/webhooks/webhooks.queries.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import type { WebhookWorker } from '../../src/modules/webhooks/worker.js';
import { invalidateClient } from '../../src/oidc/clients.js';
import { type TestApp, buildTestApp, consoleToken, createUser } from '../helpers/app.js';
import { freePort } from '../helpers/oidc.js';
import { authorizeQuery, cookieHeader, type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { refresh, signInToApp } from '../users/flow.js';
import { Receiver, selfSignedCert } from '../webhooks/receiver.js';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const AFTER_LOGOUT = 'https://app.example.com/signed-out';

let t: TestApp;
let rx: Receiver;
let worker: WebhookWorker;
let issuer: URL;
let n = 0;

/** An app of a new brand (or `brandId`) with a post-logout URI and a receiver path of its own. */
async function logoutApp(opts: { brandId?: string; orgId?: string } = {}) {
  const app = await seedClient(t, { confidential: true, ...opts });
  const path = `/bc/${++n}`;
  await t.ctx.db
    .updateTable('apps')
    .set({ post_logout_redirect_uris: [AFTER_LOGOUT], backchannel_logout_uri: rx.url(path) })
    .where('id', '=', app.appId)
    .execute();
  invalidateClient(t.ctx, app.clientId);
  return { app, path };
}

async function verifyLogoutToken(raw: Buffer) {
  const form = new URLSearchParams(raw.toString('utf8'));
  const token = String(form.get('logout_token'));
  const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
  return jwtVerify(token, createLocalJWKSet(jwks), {
    issuer: t.ctx.config.issuer,
    typ: 'logout+jwt',
    currentDate: t.clock.now(),
  });
}

function logout(query: Record<string, string>, cookies: Record<string, string> = {}) {
  return t.app.inject({
    method: 'GET',
    url: `/oauth2/logout?${new URLSearchParams(query)}`,
    headers: { cookie: cookieHeader(cookies) },
  });
}

/** Whether the browser still signs in to `app` silently (prompt=none). */
async function silentSignIn(app: SeededClient, jar: Record<string, string>): Promise<URL> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(app, { prompt: 'none' })}`,
    headers: { cookie: cookieHeader(jar) },
  });
  assert.equal(res.statusCode, 302, res.body);
  return new URL(String(res.headers.location));
}

function sessionsOf(token: string, jar: Record<string, string> = {}) {
  return t.app.inject({
    method: 'GET',
    url: '/users/me/sessions',
    headers: { authorization: `Bearer ${token}`, cookie: cookieHeader(jar) },
  });
}

before(async () => {
  const port = await freePort();
  // openid-client and jose check times against the wall clock: this app's clock starts now.
  t = await buildTestApp({
    env: {
      BASE_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_MULTIPLIER: '1000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,4',
    },
    clock: new ManualClock(Date.now()),
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  issuer = new URL(`http://127.0.0.1:${port}`);
  rx = await Receiver.start();
  worker = webhookWorker(t.ctx);
  await worker.stop();
  worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: 5000 });
});
after(async () => {
  await t.close();
  await rx.close();
});

describe('sessions and logout', () => {
  test('discovery names the end-session endpoint and the logout flags', async () => {
    const d = (await t.app.inject({ url: '/.well-known/openid-configuration' })).json();
    assert.equal(d.end_session_endpoint, `${t.ctx.config.issuer}/oauth2/logout`);
    assert.equal(d.backchannel_logout_supported, true);
    assert.equal(d.backchannel_logout_session_supported, true);
    assert.equal(d.frontchannel_logout_supported, false);
  });

  test('RP-initiated logout (openid-client builds the URL): session ended, tokens revoked, back-channel token sent, redirect with state', async () => {
    const { app, path } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    const id = decodeJwt(s.idToken);
    assert.equal(typeof id.sid, 'string');
    assert.equal(typeof id.auth_time, 'number');
    assert.ok(!(await silentSignIn(app, s.jar)).searchParams.has('error'), 'silent sign-in before logout');

    const rp = await client.discovery(issuer, app.clientId, app.clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    const end = client.buildEndSessionUrl(rp, {
      id_token_hint: s.idToken,
      post_logout_redirect_uri: AFTER_LOGOUT,
      state: 'bye-1',
    });
    assert.equal(end.pathname, '/oauth2/logout');
    const res = await t.app.inject({
      method: 'GET',
      url: `${end.pathname}${end.search}`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(res.headers.location, `${AFTER_LOGOUT}?state=bye-1`);
    assert.ok(
      res.cookies.some((c) => c.name.startsWith('gh_session_') && c.value === ''),
      'cookie cleared',
    );

    // A second authorize no longer returns a code silently.
    assert.equal((await silentSignIn(app, s.jar)).searchParams.get('error'), 'login_required');
    // The refresh token and the access token issued in the session are revoked.
    assert.equal((await refresh(t, app, s.refreshToken)).statusCode, 400);
    const info = await t.app.inject({
      url: '/userinfo',
      headers: { authorization: `Bearer ${s.accessToken}` },
    });
    assert.equal(info.statusCode, 401);

    assert.equal(await worker.runOnce(), 1);
    const got = rx.on(path);
    assert.equal(got.length, 1);
    assert.match(String(got[0].headers['content-type']), /^application\/x-www-form-urlencoded/);
    const { payload, protectedHeader } = await verifyLogoutToken(got[0].raw);
    assert.equal(protectedHeader.typ, 'logout+jwt');
    assert.equal(payload.aud, app.clientId);
    assert.equal(payload.sub, s.userId);
    assert.equal(payload.sid, id.sid);
    assert.deepEqual(payload.events, { [EVENT]: {} });
    assert.equal(payload.nonce, undefined);
    assert.equal(payload.exp, Number(payload.iat) + 120);
    assert.equal(typeof payload.jti, 'string');
  });

  test('POST with client_id and no redirect ends the brand session and shows the signed-out page', async () => {
    const { app } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/logout',
      headers: { cookie: cookieHeader(s.jar), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: app.clientId }).toString(),
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.match(res.body, /id="signed-out"/);
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'|script-src/);
    assert.equal((await silentSignIn(app, s.jar)).searchParams.get('error'), 'login_required');
  });

  test('signing in again keeps the session and its sid; another user signing in ends it as logout does', async () => {
    const { app, path } = await logoutApp();
    const wallet = createTestWallet();
    const first = await signInToApp(t, app, wallet);
    const sid = decodeJwt(first.idToken).sid;
    t.clock.advance(60);
    const again = await signInToApp(t, app, wallet, first.jar, { prompt: 'login' });
    assert.equal(decodeJwt(again.idToken).sid, sid, 'the same user: the same session');
    assert.equal(decodeJwt(again.idToken).auth_time, Number(decodeJwt(first.idToken).auth_time) + 60);
    assert.equal((await refresh(t, app, first.refreshToken)).statusCode, 200, 'its tokens live on');

    const other = await signInToApp(t, app, createTestWallet(), again.jar, { prompt: 'login' });
    assert.notEqual(decodeJwt(other.idToken).sid, sid, 'another user: a new session');
    assert.equal(
      (await refresh(t, app, again.refreshToken)).statusCode,
      400,
      'the replaced session is ended',
    );
    await worker.runOnce();
    const [delivered] = rx.on(path);
    assert.ok(delivered, 'its app was told');
    assert.equal((await verifyLogoutToken(delivered.raw)).payload.sid, sid);
  });

  test('a cross-site POST, which brings no session cookie, is sent on as the same GET, which does', async () => {
    const { app } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    const params = { client_id: app.clientId, state: 'st<1>', ui_locales: 'en' };
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(params).toString(),
    });
    assert.equal(res.statusCode, 303);
    const next = new URL(String(res.headers.location));
    assert.equal(next.pathname, '/oauth2/logout');
    assert.deepEqual(Object.fromEntries(next.searchParams), params);
    assert.equal(res.headers['set-cookie'], undefined, 'the POST itself ends nothing');
    assert.equal((await silentSignIn(app, s.jar)).searchParams.has('code'), true);
    const followed = await t.app.inject({
      method: 'GET',
      url: `${next.pathname}${next.search}`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(followed.statusCode, 200);
    assert.match(followed.body, /id="signed-out"/);
    assert.equal((await silentSignIn(app, s.jar)).searchParams.get('error'), 'login_required');
  });

  test('a Cookie header of many session names is read only up to the cap', async () => {
    const jar = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`gh_session_brand_${i}`, `x${i}`]));
    const res = await logout({}, jar);
    assert.equal(res.statusCode, 200);
    const cleared = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    assert.equal(cleared.length, 20);
  });

  test('without hint and client_id every session of the browser ends', async () => {
    const wallet = createTestWallet();
    const a = await logoutApp();
    const b = await logoutApp();
    const jar: Record<string, string> = {};
    await signInToApp(t, a.app, wallet, jar);
    const s = await signInToApp(t, b.app, wallet, jar);
    const token = await consoleToken(t, s.userId);
    assert.equal((await sessionsOf(token)).json().items.length, 2);
    const res = await logout({}, jar);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /id="signed-out"/);
    assert.equal((await sessionsOf(token)).json().items.length, 0);
    assert.equal((await silentSignIn(a.app, jar)).searchParams.get('error'), 'login_required');
    assert.equal((await silentSignIn(b.app, jar)).searchParams.get('error'), 'login_required');
  });

  test('an unregistered post_logout_redirect_uri or a bad hint is a 400 page and ends nothing', async () => {
    const { app } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    const cases: Array<Record<string, string>> = [
      { id_token_hint: s.idToken, post_logout_redirect_uri: 'https://evil.example/out' },
      { client_id: app.clientId, post_logout_redirect_uri: `${AFTER_LOGOUT}/` },
      { post_logout_redirect_uri: AFTER_LOGOUT },
      { id_token_hint: 'not.a.token' },
      // An access token is ours too, but not an ID token.
      { id_token_hint: s.accessToken },
      { id_token_hint: s.idToken, client_id: 'someone-else' },
      { client_id: 'no-such-client' },
    ];
    for (const q of cases) {
      const res = await logout(q, s.jar);
      assert.equal(res.statusCode, 400, JSON.stringify(q));
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.equal(res.headers.location, undefined);
    }
    assert.ok(!(await silentSignIn(app, s.jar)).searchParams.has('error'), 'still signed in');
  });

  test('an expired id_token_hint is still accepted', async () => {
    const { app } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    t.clock.advance(2 * 3600);
    const res = await logout({ id_token_hint: s.idToken, post_logout_redirect_uri: AFTER_LOGOUT }, s.jar);
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(res.headers.location, AFTER_LOGOUT);
  });

  test('a failing receiver is retried on the webhook schedule, then the failure is in the audit log', async () => {
    const { app, path } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    let calls = 0;
    rx.reply = (r) => (r.path === path && ++calls === 1 ? { status: 503 } : { status: 200 });
    await logout({ id_token_hint: s.idToken }, s.jar);
    await worker.runOnce();
    assert.equal(rx.on(path).length, 1);
    assert.equal(await worker.runOnce(), 0, 'not due before the first retry');
    t.clock.advance(1);
    assert.equal(await worker.runOnce(), 1);
    const [first, second] = rx.on(path);
    const a = (await verifyLogoutToken(first.raw)).payload;
    const b = (await verifyLogoutToken(second.raw)).payload;
    assert.equal(a.jti, b.jti, 'the same logout on every attempt');
    const row = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count'])
      .where('app_id', '=', app.appId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'succeeded', attempt_count: 2 });

    // A receiver that never answers 2xx: after the last retry an operator sees it.
    const other = await logoutApp();
    const o = await signInToApp(t, other.app, createTestWallet());
    rx.reply = (r) => (r.path === other.path ? { status: 500 } : { status: 200 });
    await logout({ id_token_hint: o.idToken }, o.jar);
    for (const step of [0, 1, 4]) {
      t.clock.advance(step);
      await worker.runOnce();
    }
    assert.equal(rx.on(other.path).length, 3);
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .select(['action', 'resource_id', 'metadata'])
      .where('action', '=', 'app.backchannel_logout.failed')
      .where('resource_id', '=', other.app.appId)
      .executeTakeFirst();
    assert.ok(audit, 'the exhausted delivery is in the audit log');
    rx.reply = () => ({ status: 200 });
  });

  test("a retry goes to the app's current back-channel URI, and to none once the app is disabled", async () => {
    const { app, path } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    rx.reply = (r) => (r.path === path ? { status: 503 } : { status: 200 });
    await logout({ id_token_hint: s.idToken }, s.jar);
    await worker.runOnce();
    assert.equal(rx.on(path).length, 1);
    const moved = `/bc/moved-${n}`;
    await t.ctx.db
      .updateTable('apps')
      .set({ backchannel_logout_uri: rx.url(moved) })
      .where('id', '=', app.appId)
      .execute();
    t.clock.advance(1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(rx.on(path).length, 1, 'not the old URI again');
    assert.equal(rx.on(moved).length, 1);

    const second = await logoutApp();
    const s2 = await signInToApp(t, second.app, createTestWallet());
    rx.reply = (r) => (r.path === second.path ? { status: 503 } : { status: 200 });
    await logout({ id_token_hint: s2.idToken }, s2.jar);
    await worker.runOnce();
    await t.ctx.db.updateTable('apps').set({ enabled: false }).where('id', '=', second.app.appId).execute();
    t.clock.advance(1);
    assert.equal(await worker.runOnce(), 0, 'a disabled app is not told');
    assert.equal(rx.on(second.path).length, 1);
    rx.reply = () => ({ status: 200 });
  });

  test('a logout token claimed by an instance that dies is sent by another once its lease ends', async () => {
    const { app, path } = await logoutApp();
    const s = await signInToApp(t, app, createTestWallet());
    await logout({ id_token_hint: s.idToken }, s.jar);
    // Instance A claims the delivery and is killed before sending it.
    const now = t.clock.now();
    const claimed = await claimDue(t.ctx.db, now, worker.leaseUntil(now), 10);
    assert.equal(claimed.length, 1);
    assert.equal(claimed[0].kind, 'backchannel_logout');
    assert.equal(await worker.runOnce(), 0, 'leased to A');
    t.clock.advance((worker.leaseUntil(now).getTime() - now.getTime()) / 1000 + 1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(rx.on(path).length, 1);
    assert.equal((await verifyLogoutToken(rx.on(path)[0].raw)).payload.aud, app.clientId);
  });
});

describe('GET and DELETE /users/me/sessions', () => {
  test('lists sessions across brands with the current one marked; ending one sends its back-channel token', async () => {
    const wallet = createTestWallet();
    const a = await logoutApp();
    const b = await logoutApp();
    const jarA: Record<string, string> = {};
    const jarB: Record<string, string> = {};
    const sa = await signInToApp(t, a.app, wallet, jarA);
    await signInToApp(t, b.app, wallet, jarB);
    const token = await consoleToken(t, sa.userId);
    const list = await sessionsOf(token, jarA);
    assert.equal(list.statusCode, 200);
    const items = list.json().items as Array<Record<string, unknown>>;
    assert.equal(items.length, 2);
    assert.deepEqual(new Set(items.map((i) => i.brand)), new Set([a.app.brandSlug, b.app.brandSlug]));
    const mine = items.find((i) => i.brand === a.app.brandSlug);
    assert.equal(mine?.current, true);
    assert.equal(mine?.id, decodeJwt(sa.idToken).sid);
    assert.equal(items.find((i) => i.brand === b.app.brandSlug)?.current, false);
    assert.equal(typeof mine?.lastSeenAt, 'string');
    assert.equal(typeof mine?.ip, 'string');

    // Bearer only: nothing is current.
    const bare = (await sessionsOf(token)).json().items as Array<{ current: boolean }>;
    assert.ok(bare.every((i) => !i.current));

    // Another user cannot end it.
    const stranger = await createUser(t);
    const denied = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/sessions/${mine?.id}`,
      headers: stranger.auth,
    });
    assert.equal(denied.statusCode, 404);
    assert.equal(denied.json().error.code, 'not_found');

    const del = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/sessions/${mine?.id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(del.statusCode, 204);
    assert.equal((await silentSignIn(a.app, jarA)).searchParams.get('error'), 'login_required');
    assert.equal((await refresh(t, a.app, sa.refreshToken)).statusCode, 400);
    await worker.runOnce();
    const sent = rx.on(a.path);
    assert.equal(sent.length, 1);
    assert.equal((await verifyLogoutToken(sent[0].raw)).payload.sid, mine?.id);
    assert.equal(rx.on(b.path).length, 0, 'the other session stays');

    const again = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/sessions/${mine?.id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(again.statusCode, 404);
  });

  test('without credentials: 401', async () => {
    assert.equal((await t.app.inject({ url: '/users/me/sessions' })).statusCode, 401);
    const del = await t.app.inject({ method: 'DELETE', url: '/users/me/sessions/ses_x' });
    assert.equal(del.statusCode, 401);
  });

  test('an API key needs users:read to list and users:write to end; nothing is current for it', async () => {
    const s = await signInToApp(t, (await logoutApp()).app, createTestWallet());
    const token = await consoleToken(t, s.userId);
    const key = async (scopes: string[]) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/users/me/api-keys',
        headers: { authorization: `Bearer ${token}` },
        payload: { name: `k-${scopes.join('-')}`, scopes },
      });
      assert.equal(res.statusCode, 201, res.body);
      return { authorization: `Bearer ${res.json().key}` };
    };
    const reader = await key(['users:read']);
    const writer = await key(['users:write']);
    const listed = await t.app.inject({ url: '/users/me/sessions', headers: reader });
    assert.equal(listed.statusCode, 200);
    const [only] = listed.json().items;
    assert.equal(only.current, false);
    assert.equal((await t.app.inject({ url: '/users/me/sessions', headers: writer })).statusCode, 403);
    const url = `/users/me/sessions/${only.id}`;
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: reader })).statusCode, 403);
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: writer })).statusCode, 204);
  });

  test('account deletion and consent revocation send back-channel logout tokens', async () => {
    const a = await logoutApp();
    const s = await signInToApp(t, a.app, createTestWallet());
    const token = await consoleToken(t, s.userId);
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/consent-grants/${a.app.clientId}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(revoke.statusCode, 204);
    await worker.runOnce();
    assert.equal(rx.on(a.path).length, 1);
    assert.equal((await verifyLogoutToken(rx.on(a.path)[0].raw)).payload.sid, decodeJwt(s.idToken).sid);

    const b = await logoutApp();
    const s2 = await signInToApp(t, b.app, createTestWallet());
    const gone = await t.app.inject({
      method: 'DELETE',
      url: '/users/me',
      headers: { authorization: `Bearer ${await consoleToken(t, s2.userId)}` },
    });
    assert.equal(gone.statusCode, 204);
    await worker.runOnce();
    assert.equal(rx.on(b.path).length, 1);
    assert.equal((await verifyLogoutToken(rx.on(b.path)[0].raw)).payload.sub, s2.userId);
  });
});
