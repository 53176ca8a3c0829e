import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { rateLimits } from '../../src/config/defaults.js';
import { type TestApp, buildTestApp, json } from '../helpers/app.js';
import { DEVICE_GRANT, type TestBrand, createApp, createBrand, form } from '../helpers/oidc.js';

/**
 * The issuer's per-client limits key on who the caller proved to be, not on the client_id it claims:
 * a stranger's junk requests (wrong secrets, or a public client's id from elsewhere) never spend the
 * budget of the client's real users. Failed client authentication is limited per (client_id, source)
 * and per source. Default multiplier: the interface's numbers.
 */
let t: TestApp;
let brand: TestBrand;

beforeEach(async () => {
  t = await buildTestApp();
  brand = await createBrand(t);
});
afterEach(() => t.close());

const ATTACKER = '198.51.100.66';
const USER = '203.0.113.20';

function post(url: string, fields: Record<string, string | undefined>, remoteAddress: string) {
  const f = form(fields);
  return t.app.inject({ method: 'POST', url, ...f, remoteAddress });
}

const cc = (clientId: string, secret: string | undefined, ip: string) =>
  post('/oauth2/token', { grant_type: 'client_credentials', client_id: clientId, client_secret: secret }, ip);

async function repeat(n: number, f: () => Promise<{ statusCode: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await f()).statusCode);
  return out;
}

describe('a stranger cannot lock a client out', () => {
  test('/oauth2/token: 40 wrong secrets from one address leave the right secret working elsewhere', async () => {
    const c = await createApp(t, brand, { grants: ['client_credentials'], scopes: ['orders:read'] });
    await repeat(40, () => cc(c.clientId, 'wrong', ATTACKER));
    const res = await cc(c.clientId, c.clientSecret, USER);
    assert.equal(res.statusCode, 200, res.body);
  });

  test('/oauth2/revoke: junk under the client id does not spend the client budget', async () => {
    const c = await createApp(t, brand);
    await repeat(40, () => post('/oauth2/revoke', { token: 'x', client_id: c.clientId }, ATTACKER));
    const res = await post(
      '/oauth2/revoke',
      { token: 'x', client_id: c.clientId, client_secret: c.clientSecret },
      USER,
    );
    assert.equal(res.statusCode, 200, res.body);
  });

  test('/oauth2/device/authorize: a public client id spent from one address still serves devices elsewhere', async () => {
    const c = await createApp(t, brand, { confidential: false, grants: [DEVICE_GRANT] });
    const start = (ip: string) =>
      post('/oauth2/device/authorize', { client_id: c.clientId, scope: 'openid' }, ip);
    const flood = await repeat(40, () => start(ATTACKER));
    assert.equal(flood.at(-1), 429, 'the flooding address is limited');
    assert.equal((await start(USER)).statusCode, 200);
  });

  test('/oauth2/device/authorize: wrong secrets of a confidential client do not spend its budget', async () => {
    const c = await createApp(t, brand, { grants: [DEVICE_GRANT] });
    await repeat(40, () =>
      post('/oauth2/device/authorize', { client_id: c.clientId, client_secret: 'wrong' }, ATTACKER),
    );
    const res = await post(
      '/oauth2/device/authorize',
      { client_id: c.clientId, client_secret: c.clientSecret, scope: 'openid' },
      USER,
    );
    assert.equal(res.statusCode, 200, res.body);
  });
});

describe('failed client authentication is limited per (client_id, source) and per source', () => {
  test('after the per-pair budget a wrong secret is 429; the right secret is never refused for it', async () => {
    const c = await createApp(t, brand, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const perPair = rateLimits.clientAuthFailure.points;
    const wrong = await repeat(perPair + 2, () => cc(c.clientId, 'wrong', ATTACKER));
    assert.deepEqual(wrong.slice(0, perPair), Array(perPair).fill(401));
    assert.deepEqual(wrong.slice(perPair), [429, 429]);
    const refused = await cc(c.clientId, 'wrong', ATTACKER);
    assert.equal(json(refused).error, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // The same client from another address still fails normally …
    assert.equal((await cc(c.clientId, 'wrong', USER)).statusCode, 401);
    // … and the right secret works, from anywhere.
    assert.equal((await cc(c.clientId, c.clientSecret, USER)).statusCode, 200);
    assert.equal((await cc(c.clientId, c.clientSecret, ATTACKER)).statusCode, 200);
  });

  test('one address failing across many client ids runs out of its per-source budget', async () => {
    const perSource = rateLimits.clientAuthFailureSource.points;
    const ids = Array.from({ length: perSource + 1 }, (_, i) => `cl_unknown_${i}`);
    const statuses: number[] = [];
    for (const id of ids) statuses.push((await cc(id, 'x', ATTACKER)).statusCode);
    assert.deepEqual(statuses.slice(0, perSource), Array(perSource).fill(401));
    assert.equal(statuses[perSource], 429);
    // Another address is unaffected.
    assert.equal((await cc('cl_unknown_x', 'x', USER)).statusCode, 401);
  });

  test('the per-source budget is shared by an IPv6 /64', async () => {
    const perPair = rateLimits.clientAuthFailure.points;
    const statuses: number[] = [];
    for (let i = 0; i <= perPair; i++)
      statuses.push((await cc('cl_unknown_v6', 'x', `2001:db8:66:1::${(i + 1).toString(16)}`)).statusCode);
    assert.equal(statuses[perPair], 429);
  });
});

describe('the device-code grant is throttled', () => {
  test('polling spends the token endpoint per-client budget', async () => {
    const c = await createApp(t, brand, { confidential: false, grants: [DEVICE_GRANT] });
    const started = await post('/oauth2/device/authorize', { client_id: c.clientId, scope: 'openid' }, USER);
    const { device_code } = json(started);
    const poll = () =>
      post('/oauth2/token', { grant_type: DEVICE_GRANT, device_code, client_id: c.clientId }, USER);
    const polls = await repeat(rateLimits.token.points, poll);
    assert.ok(!polls.includes(429), `${polls}`);
    const over = await poll();
    assert.equal(over.statusCode, 429);
    assert.equal(json(over).error, 'rate_limited');
  });

  test('unknown device codes are limited per source', async () => {
    const c = await createApp(t, brand, { confidential: false, grants: [DEVICE_GRANT] });
    const guess = (ip: string, i: number) =>
      post(
        '/oauth2/token',
        { grant_type: DEVICE_GRANT, device_code: `guess-${i}`, client_id: c.clientId },
        ip,
      );
    const budget = rateLimits.deviceCodeUnknown.points;
    const statuses: number[] = [];
    for (let i = 0; i <= budget; i++) statuses.push((await guess(ATTACKER, i)).statusCode);
    assert.deepEqual(statuses.slice(0, budget), Array(budget).fill(400));
    assert.equal(statuses[budget], 429);
    assert.equal((await guess(USER, 999)).statusCode, 400, 'another address still gets invalid_grant');
  });
});
