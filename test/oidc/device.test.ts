import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { sha256 } from '../../src/lib/hash.js';
import { sweepExpiredTokens } from '../../src/oidc/revocation.js';
import {
  approveDevice,
  denyDevice,
  findPendingDevice,
  normalizeUserCode,
} from '../../src/oidc/device-store.js';
import { type TestApp, type TestUser, buildTestApp, createUser, json } from '../helpers/app.js';
import {
  DEVICE_GRANT,
  type TestBrand,
  type TestClient,
  createApp,
  createBrand,
  form,
  subscribeTokenEvents,
} from '../helpers/oidc.js';

let t: TestApp;
let brand: TestBrand;
let tv: TestClient;
let confidentialTv: TestClient;
let user: TestUser;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  brand = await createBrand(t);
  await subscribeTokenEvents(t, brand.orgId);
  tv = await createApp(t, brand, {
    confidential: false,
    grants: [DEVICE_GRANT, 'refresh_token'],
    scopes: ['openid', 'profile', 'offline_access'],
  });
  confidentialTv = await createApp(t, brand, { grants: [DEVICE_GRANT] });
  user = await createUser(t);
});
after(() => t.close());

function authorize(fields: Record<string, string | undefined>) {
  const f = form(fields);
  return t.app.inject({ method: 'POST', url: '/oauth2/device/authorize', ...f });
}

async function start(scope = 'openid profile offline_access', c: TestClient = tv) {
  const res = await authorize({ client_id: c.clientId, scope });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ device_code: string; user_code: string; interval: number; expires_in: number }>(res);
}

function poll(deviceCode: string, c: TestClient = tv, extra: Record<string, string> = {}) {
  const f = form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: c.clientId, ...extra });
  return t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
}

async function pollError(deviceCode: string, c: TestClient = tv): Promise<string> {
  const res = await poll(deviceCode, c);
  assert.equal(res.statusCode, 400, res.body);
  return json(res).error;
}

describe('device authorization', () => {
  test('answers device_code, a BCDF-GHJK user code, verification URIs, 600 s and interval 5', async () => {
    const res = await authorize({ client_id: tv.clientId, scope: 'openid' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = json(res);
    assert.match(body.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(body.verification_uri, `${t.ctx.config.baseUrl}/device`);
    assert.equal(
      body.verification_uri_complete,
      `${t.ctx.config.baseUrl}/device?user_code=${body.user_code}`,
    );
    assert.equal(body.expires_in, 600);
    assert.equal(body.interval, 5);
    assert.ok(body.device_code.length >= 40);
    const stored = await t.ctx.db
      .selectFrom('device_authorizations')
      .select(['device_code_hash'])
      .where('device_code_hash', '=', sha256(body.device_code))
      .executeTakeFirst();
    assert.ok(stored, 'stored as a hash');
  });

  test('user codes are normalised (case, dash, spaces) and findPendingDevice names the client and scopes', async () => {
    const d = await start('openid profile');
    assert.equal(
      normalizeUserCode(d.user_code.toLowerCase().replace('-', ' ')),
      d.user_code.replace('-', ''),
    );
    assert.equal(normalizeUserCode('AEIO-UBCD'), null);
    const found = await findPendingDevice(t.ctx, d.user_code.toLowerCase());
    assert.equal(found?.clientId, tv.clientId);
    assert.deepEqual(found?.scopes, ['openid', 'profile']);
    assert.equal(found?.expiresAt.getTime(), t.clock.nowMs() + 600_000);
  });

  test('errors: unknown client invalid_client, no device grant unauthorized_client, scope beyond the app invalid_scope', async () => {
    const none = await authorize({ client_id: 'nobody' });
    assert.equal(none.statusCode, 401);
    assert.equal(json(none).error, 'invalid_client');
    const web = await createApp(t, brand, { grants: ['authorization_code'] });
    assert.equal(json(await authorize({ client_id: web.clientId })).error, 'unauthorized_client');
    assert.equal(
      json(await authorize({ client_id: tv.clientId, scope: 'openid orders:write' })).error,
      'invalid_scope',
    );
    assert.equal((await authorize({})).statusCode, 401);
  });

  test('a confidential client may send only its client_id, but a secret it sends must be right', async () => {
    assert.equal((await authorize({ client_id: confidentialTv.clientId, scope: 'openid' })).statusCode, 200);
    const ok = await authorize({
      client_id: confidentialTv.clientId,
      client_secret: confidentialTv.clientSecret,
      scope: 'openid',
    });
    assert.equal(ok.statusCode, 200);
    const bad = await authorize({
      client_id: confidentialTv.clientId,
      client_secret: 'wrong',
      scope: 'openid',
    });
    assert.equal(bad.statusCode, 401);
    assert.equal(json(bad).error, 'invalid_client');
    const d = json(ok);
    assert.equal((await poll(d.device_code, confidentialTv, { client_secret: 'wrong' })).statusCode, 401);
  });
});

describe('device_code polling', () => {
  test('pending, then tokens exactly once after approval, then invalid_grant', async () => {
    const d = await start();
    assert.equal(await pollError(d.device_code), 'authorization_pending');
    assert.equal(await approveDevice(t.ctx, d.user_code, user.id, t.clock.nowSec() - 3), true);
    assert.equal(await approveDevice(t.ctx, d.user_code, user.id, t.clock.nowSec()), false, 'only once');
    t.clock.advance(5);
    const res = await poll(d.device_code);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.scope, 'openid profile offline_access');
    assert.ok(body.refresh_token);
    assert.equal(decodeJwt(body.id_token).aud, tv.clientId);
    assert.equal(decodeJwt(body.access_token).auth_time, t.clock.nowSec() - 8);
    t.clock.advance(5);
    assert.equal(await pollError(d.device_code), 'invalid_grant');
    const ev = await t.ctx.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'token.issued')
      .execute();
    assert.ok(ev.some((e) => (e.data as { grant?: string }).grant === DEVICE_GRANT));
  });

  test('without openid there is no ID token', async () => {
    const d = await start('profile');
    await approveDevice(t.ctx, d.user_code, user.id, t.clock.nowSec());
    const body = json(await poll(d.device_code));
    assert.equal(body.id_token, undefined);
    assert.equal(body.refresh_token, undefined);
  });

  test('slow_down when polled faster than the interval, which then grows by 5 s for that code', async () => {
    const d = await start();
    const other = await start();
    assert.equal(await pollError(d.device_code), 'authorization_pending');
    t.clock.advance(4);
    assert.equal(await pollError(d.device_code), 'slow_down');
    // The other device code keeps its own pace.
    assert.equal(await pollError(other.device_code), 'authorization_pending');
    t.clock.advance(5);
    assert.equal(await pollError(d.device_code), 'slow_down', 'interval is now 10 s');
    t.clock.advance(15);
    assert.equal(await pollError(d.device_code), 'authorization_pending');
    const row = await t.ctx.db
      .selectFrom('device_authorizations')
      .select('poll_interval')
      .where('device_code_hash', '=', sha256(d.device_code))
      .executeTakeFirstOrThrow();
    assert.equal(row.poll_interval, 15);
  });

  test('access_denied after the user denies', async () => {
    const d = await start();
    assert.equal(await denyDevice(t.ctx, d.user_code), true);
    assert.equal(await findPendingDevice(t.ctx, d.user_code), null);
    assert.equal(await approveDevice(t.ctx, d.user_code, user.id, t.clock.nowSec()), false);
    assert.equal(await pollError(d.device_code), 'access_denied');
  });

  test('expired_token after 600 s; approval is no longer possible', async () => {
    const d = await start();
    t.clock.advance(599);
    assert.ok(await findPendingDevice(t.ctx, d.user_code));
    t.clock.advance(1);
    assert.equal(await findPendingDevice(t.ctx, d.user_code), null);
    assert.equal(await approveDevice(t.ctx, d.user_code, user.id, t.clock.nowSec()), false);
    assert.equal(await pollError(d.device_code), 'expired_token');
    // Still so after the expired rows' sweep: a device polling late hears why (RFC 8628 §3.5).
    t.clock.advance(3600);
    await sweepExpiredTokens(t.ctx);
    assert.equal(await pollError(d.device_code), 'expired_token');
  });

  test("another client's device code, an unknown code and a missing one", async () => {
    const d = await start();
    const otherTv = await createApp(t, brand, { confidential: false, grants: [DEVICE_GRANT] });
    assert.equal(await pollError(d.device_code, otherTv), 'invalid_grant');
    assert.equal(await pollError('nope'), 'invalid_grant');
    const f = form({ grant_type: DEVICE_GRANT, client_id: tv.clientId });
    const res = await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
    assert.equal(json(res).error, 'invalid_request');
  });

  test('a client without the device grant is unauthorized_client at the token endpoint', async () => {
    const web = await createApp(t, brand, { confidential: false, grants: ['authorization_code'] });
    assert.equal(await pollError('whatever', web), 'unauthorized_client');
  });
});

describe('device authorization rate limit', () => {
  test('30 per minute per client_id', async () => {
    const t2 = await buildTestApp();
    try {
      const c2 = await createApp(t2, await createBrand(t2), { confidential: false, grants: [DEVICE_GRANT] });
      const call = () => {
        const f = form({ client_id: c2.clientId, scope: 'openid' });
        return t2.app.inject({ method: 'POST', url: '/oauth2/device/authorize', ...f });
      };
      for (let i = 0; i < 30; i++) assert.equal((await call()).statusCode, 200);
      const res = await call();
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).error, 'rate_limited');
    } finally {
      await t2.close();
    }
  });
});
