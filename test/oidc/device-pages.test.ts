import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { sha256 } from '../../src/lib/hash.js';
import { normalizeUserCode } from '../../src/oidc/device-store.js';
import {
  type SeededClient,
  collectCookies,
  cookieHeader,
  randomIp,
  seedClient,
  walletSignIn,
} from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const BASE = 'http://gatehouse.test';

let t: TestApp;
let tv: SeededClient;
let elsewhere: SeededClient;

before(async () => {
  t = await buildTestApp();
  tv = await seedClient(t, { grantTypes: ['authorization_code', DEVICE_GRANT] });
  elsewhere = await seedClient(t, { grantTypes: ['authorization_code', DEVICE_GRANT] });
});
after(() => t.close());

async function startDevice(client: SeededClient, scope = 'openid profile') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/oauth2/device/authorize',
    payload: new URLSearchParams({ client_id: client.clientId, scope }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { device_code: string; user_code: string; verification_uri_complete: string };
}

function poll(client: SeededClient, deviceCode: string) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
      client_id: client.clientId,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

/** Follows the device page through the hosted sign-in and returns the signed-in cookie jar. */
async function signInThroughDevicePage(client: SeededClient, userCode: string, ip: string) {
  const page = await t.app.inject({
    method: 'GET',
    url: `/device?user_code=${encodeURIComponent(userCode)}`,
    remoteAddress: ip,
  });
  assert.equal(page.statusCode, 302, page.body);
  const id = String(page.headers.location).match(/^http:\/\/gatehouse\.test\/signin\/([A-Za-z0-9]+)$/)?.[1];
  assert.ok(id, String(page.headers.location));
  const view = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
  assert.equal(view.json().step, 'signin');
  assert.equal(view.json().app.clientId, client.clientId);
  // The browser keeps the code (a cookie of the device flow); the service keeps only its hash.
  const { res, jar } = await walletSignIn(t, id, createTestWallet(), collectCookies(page));
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { step: 'done', redirectTo: `${BASE}/device` });
  return jar;
}

function csrfOf(html: string): string {
  const m = html.match(/name="csrf_token" value="([0-9a-f]+)"/);
  assert.ok(m, 'the page embeds a CSRF token');
  return m[1];
}

describe('device pages', () => {
  it('GET /device without a code shows the code form', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/device', remoteAddress: randomIp() });
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.includes('name="user_code"'));
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(res.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
  });

  it('a wrong code shows the form again with an error (400)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/device?user_code=BCDF-GHJK',
      remoteAddress: randomIp(),
    });
    assert.equal(res.statusCode, 400);
    assert.ok(res.body.includes('id="device-error"'));
  });

  it('signs in through the hosted flow, then approves with the form and its CSRF token; the device gets tokens', async () => {
    const ip = randomIp();
    const d = await startDevice(tv);
    assert.equal(d.verification_uri_complete, `${BASE}/device?user_code=${encodeURIComponent(d.user_code)}`);
    const jar = await signInThroughDevicePage(tv, d.user_code, ip);

    const page = await t.app.inject({
      method: 'GET',
      url: `/device?user_code=${encodeURIComponent(d.user_code)}`,
      headers: { cookie: cookieHeader(jar) },
      remoteAddress: ip,
    });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(`App ${tv.clientId}`));
    assert.ok(page.body.includes('data-scope="profile"'));
    const csrf = csrfOf(page.body);

    const form = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/device/approve',
        payload: new URLSearchParams(fields).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: cookieHeader(jar),
          origin: BASE,
        },
        remoteAddress: ip,
      });
    const noToken = await form({ user_code: d.user_code });
    assert.equal(noToken.statusCode, 403);
    const badToken = await form({ user_code: d.user_code, csrf_token: 'a'.repeat(64) });
    assert.equal(badToken.statusCode, 403);
    assert.equal((await poll(tv, d.device_code)).json().error, 'authorization_pending');

    const ok = await form({ user_code: d.user_code, csrf_token: csrf });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.match(ok.headers['content-type'] as string, /^text\/html/);
    assert.ok(ok.body.includes('Device connected'));

    t.clock.advance(10);
    const tokens = await poll(tv, d.device_code);
    assert.equal(tokens.statusCode, 200, tokens.body);
    assert.ok(tokens.json().access_token);

    const session = await t.ctx.db
      .selectFrom('sessions')
      .select('user_id')
      .where('brand_id', '=', tv.brandId)
      .execute();
    const activity = await t.ctx.db
      .selectFrom('activity')
      .select('type')
      .where(
        'user_id',
        'in',
        session.map((s) => s.user_id),
      )
      .where('type', '=', 'device_authorized')
      .execute();
    assert.equal(activity.length, 1);
  });

  it('keeps the user code only as its hash: interaction rows hold no plaintext, the browser brings it back', async () => {
    const ip = randomIp();
    const d = await startDevice(tv);
    const jar = await signInThroughDevicePage(tv, d.user_code, ip);
    const rows = await t.ctx.db.selectFrom('interactions').selectAll().where('kind', '=', 'device').execute();
    assert.ok(rows.length > 0);
    const raw = normalizeUserCode(d.user_code)!;
    for (const row of rows) {
      const text = JSON.stringify(row);
      for (const form of [d.user_code, raw, raw.toLowerCase(), encodeURIComponent(d.user_code)])
        assert.ok(!text.includes(form), `plaintext user code in an interaction row: ${text}`);
    }
    assert.ok(rows.some((r) => JSON.stringify(r.params).includes(sha256(raw))));
    // Back from sign-in, /device shows the code to compare with the device, from the browser's cookie.
    const page = await t.app.inject({
      method: 'GET',
      url: '/device',
      headers: { cookie: cookieHeader(jar) },
      remoteAddress: ip,
    });
    assert.equal(page.statusCode, 200, page.body);
    assert.ok(page.body.includes(`id="device-code">${raw.slice(0, 4)}-${raw.slice(4)}<`), page.body);
    assert.ok(page.body.includes('id="device-approve"'));
  });

  it('denies with JSON; the device sees access_denied', async () => {
    const ip = randomIp();
    const d = await startDevice(tv);
    const jar = await signInThroughDevicePage(tv, d.user_code, ip);
    const res = await t.app.inject({
      method: 'POST',
      url: '/device/deny',
      payload: { user_code: d.user_code },
      headers: { cookie: cookieHeader(jar) },
      remoteAddress: ip,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { status: 'denied' });
    assert.equal((await poll(tv, d.device_code)).json().error, 'access_denied');
    // Decided once: a second decision finds nothing pending.
    const again = await t.app.inject({
      method: 'POST',
      url: '/device/approve',
      payload: { user_code: d.user_code },
      headers: { cookie: cookieHeader(jar) },
      remoteAddress: ip,
    });
    assert.equal(again.statusCode, 404);
  });

  it('refuses without a session of the client’s brand (401) and from another origin (403)', async () => {
    const ip = randomIp();
    const other = await startDevice(elsewhere);
    const jarOther = await signInThroughDevicePage(elsewhere, other.user_code, ip);
    const d = await startDevice(tv);
    const noSession = await t.app.inject({
      method: 'POST',
      url: '/device/approve',
      payload: { user_code: d.user_code },
      headers: { cookie: cookieHeader(jarOther) },
      remoteAddress: ip,
    });
    assert.equal(noSession.statusCode, 401);
    assert.equal(noSession.json().error.code, 'unauthorized');
    const crossSite = await t.app.inject({
      method: 'POST',
      url: '/device/approve',
      payload: { user_code: d.user_code },
      headers: { origin: 'https://evil.example' },
      remoteAddress: ip,
    });
    assert.equal(crossSite.statusCode, 403);
    const missing = await t.app.inject({
      method: 'POST',
      url: '/device/approve',
      payload: {},
      remoteAddress: ip,
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.code, 'validation_failed');
  });

  it('same-origin guard as browsers send it: the page’s form with its token passes, other sites do not', async () => {
    const ip = randomIp();
    const d = await startDevice(tv);
    const jar = await signInThroughDevicePage(tv, d.user_code, ip);
    const page = await t.app.inject({
      method: 'GET',
      url: `/device?user_code=${encodeURIComponent(d.user_code)}`,
      headers: { cookie: cookieHeader(jar) },
      remoteAddress: ip,
    });
    // The pages ask browsers to send our Origin on their own form posts.
    assert.equal(page.headers['referrer-policy'], 'same-origin');
    assert.doesNotMatch(page.body, /name="referrer"/);
    const csrf = csrfOf(page.body);
    const post = (headers: Record<string, string>, fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/device/deny',
        payload: new URLSearchParams(fields).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: cookieHeader(jar),
          ...headers,
        },
        remoteAddress: ip,
      });
    const withToken = { user_code: d.user_code, csrf_token: csrf };
    // Another site, even holding a token, and however the browser labels it: refused before any work.
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'http://gatehouse.test.evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'null' },
    ];
    for (const headers of foreign) {
      const res = await post(headers, withToken);
      assert.equal(res.statusCode, 403, JSON.stringify(headers));
      assert.deepEqual(res.json().error.details, { missing: ['same-origin'] });
    }
    // An opaque origin (a no-referrer policy, a privacy setting) proves nothing: the token decides.
    const nullNoToken = await post(
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
      { user_code: d.user_code },
    );
    assert.equal(nullNoToken.statusCode, 403);
    assert.match(nullNoToken.headers['content-type'] as string, /^text\/html/, 'a page, not raw JSON');
    assert.equal((await poll(tv, d.device_code)).json().error, 'authorization_pending');
    const nullWithToken = await post({ origin: 'null', 'sec-fetch-site': 'same-origin' }, withToken);
    assert.equal(nullWithToken.statusCode, 200, nullWithToken.body);
    assert.ok(nullWithToken.body.includes('You can go back to your device.'));
    t.clock.advance(10);
    assert.equal((await poll(tv, d.device_code)).json().error, 'access_denied');
  });

  it('throttles wrong user codes per IP (deviceUserCode) and then refuses even a right one', async () => {
    const ip = randomIp();
    const d = await startDevice(tv);
    let last: Awaited<ReturnType<typeof t.app.inject>> | undefined;
    for (let i = 0; i < 11; i++) {
      last = await t.app.inject({
        method: 'POST',
        url: '/device/approve',
        payload: { user_code: `WRONG-${i}` },
        remoteAddress: ip,
      });
      if (i < 10) assert.equal(last.statusCode, 404, `attempt ${i}`);
    }
    assert.equal(last?.statusCode, 429);
    const right = await t.app.inject({
      method: 'GET',
      url: `/device?user_code=${d.user_code}`,
      remoteAddress: ip,
    });
    assert.equal(right.statusCode, 429);
    const otherIp = await t.app.inject({
      method: 'GET',
      url: `/device?user_code=${d.user_code}`,
      remoteAddress: randomIp(),
    });
    assert.equal(otherIp.statusCode, 302);
  });
});

describe('device page abuse limits', () => {
  it('views of the device page are limited per network source, live codes included (devicePage, 60/min)', async () => {
    const { user_code } = await startDevice(tv);
    const ip = randomIp();
    for (let i = 0; i < 60; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/device?user_code=${user_code}`,
        remoteAddress: ip,
      });
      assert.equal(res.statusCode, 302, `view ${i + 1}: ${res.body}`);
    }
    const refused = await t.app.inject({
      method: 'GET',
      url: `/device?user_code=${user_code}`,
      remoteAddress: ip,
    });
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    // Another source is not affected.
    const other = await t.app.inject({ method: 'GET', url: '/device', remoteAddress: randomIp() });
    assert.equal(other.statusCode, 200);
  });

  it('on https the kept user code is a SameSite=Lax cookie, so another site cannot replace it', async () => {
    const https = await buildTestApp({ env: { BASE_URL: 'https://gatehouse.test' } });
    try {
      const client = await seedClient(https, { grantTypes: ['authorization_code', DEVICE_GRANT] });
      const started = await https.app.inject({
        method: 'POST',
        url: '/oauth2/device/authorize',
        payload: new URLSearchParams({ client_id: client.clientId, scope: 'openid' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const page = await https.app.inject({
        method: 'GET',
        url: `/device?user_code=${started.json().user_code}`,
        remoteAddress: randomIp(),
      });
      assert.equal(page.statusCode, 302, page.body);
      const cookies = ([] as string[]).concat(page.headers['set-cookie'] ?? []);
      const device = cookies.find((c) => c.startsWith('gh_dev_'));
      const interaction = cookies.find((c) => c.startsWith('gh_ia_'));
      assert.ok(device && interaction, cookies.join('\n'));
      assert.match(device, /SameSite=Lax/i);
      assert.match(device, /Secure/);
      // The interaction's binding must survive a provider's cross-site form_post return.
      assert.match(interaction, /SameSite=None/i);
    } finally {
      await https.close();
    }
  });
});
