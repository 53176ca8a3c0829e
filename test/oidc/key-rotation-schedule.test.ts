import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { defaults } from '../../src/config/defaults.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { rotateKeysOnSchedule } from '../../src/oidc/key-rotation.js';
import { rotateSigningKey } from '../../src/stores/signing-keys.store.js';
import { type TestApp, buildTestApp, json } from '../helpers/app.js';
import { type TestClient, createApp, createBrand, form } from '../helpers/oidc.js';

const DAY = 24 * 3600;
let t: TestApp;
let service: TestClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000', KEY_ROTATION_DAYS: '7' } });
  service = await createApp(t, await createBrand(t), { grants: ['client_credentials'] });
});
after(() => t.close());

async function issue(): Promise<string> {
  const f = form({
    grant_type: 'client_credentials',
    client_id: service.clientId,
    client_secret: service.clientSecret,
    scope: 'orders:read',
  });
  const res = await t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).access_token;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;

async function active(token: string): Promise<boolean> {
  const f = form({ token, client_id: service.clientId, client_secret: service.clientSecret });
  return json(await t.app.inject({ method: 'POST', url: '/oauth2/introspect', ...f })).active;
}

async function jwksKids(): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  return json(res).keys.map((k: { kid: string }) => k.kid);
}

/** Moves the clock; instances reread the key set after keySetRefreshMs, so past it too. */
function advance(seconds: number) {
  t.clock.advance(seconds + defaults.keySetRefreshMs / 1000);
}

describe('scheduled signing-key rotation (KEY_ROTATION_DAYS)', () => {
  test('KEY_ROTATION_DAYS is off by default and must be a whole number of days ≥ 1', () => {
    assert.equal(loadConfig({ NODE_ENV: 'test' }, () => {}).keyRotationDays, undefined);
    assert.equal(loadConfig({ NODE_ENV: 'test', KEY_ROTATION_DAYS: '30' }, () => {}).keyRotationDays, 30);
    for (const bad of ['0', '-1', 'weekly', '1.5'])
      assert.throws(
        () => loadConfig({ NODE_ENV: 'test', KEY_ROTATION_DAYS: bad }, () => {}),
        ConfigError,
        bad,
      );
  });

  test('a new key is published a day before it signs; the old one stays until its tokens expire', async () => {
    advance(1);
    const before = await issue();
    const first = kidOf(before);
    assert.equal(await rotateKeysOnSchedule(t.ctx), null, 'not due yet');

    // Six days in (a day before the seven are up), the next key is made, and made once: two
    // instances checking at the same moment find it through the database.
    advance(6 * DAY - 60);
    assert.equal(await rotateKeysOnSchedule(t.ctx), null);
    advance(60);
    const made = await Promise.all([rotateKeysOnSchedule(t.ctx), rotateKeysOnSchedule(t.ctx)]);
    const next = made.find((k) => k !== null) as string;
    assert.ok(next);
    assert.equal(made.filter((k) => k !== null).length, 1, 'one rotation however many instances check');
    assert.equal(await rotateKeysOnSchedule(t.ctx), null, 'the pending key is the newest: nothing to do');

    // Published, not signing: the JWKS has both, tokens are still signed by the first key.
    advance(1);
    assert.deepEqual((await jwksKids()).sort(), [first, next].sort());
    const stillOld = await issue();
    assert.equal(kidOf(stillOld), first);
    advance(DAY - 10);
    assert.equal(kidOf(await issue()), first, 'until the day has passed');

    // The day is up: the new key signs; the old one stays in the JWKS and its tokens verify.
    advance(10);
    const fresh = await issue();
    assert.equal(kidOf(fresh), next);
    assert.deepEqual((await jwksKids()).sort(), [first, next].sort());
    assert.equal(await active(fresh), true);

    // The old key's last token (signed just before the switch) expires within the access token
    // lifetime; the key leaves the JWKS after retiredKeyGrace (the longest token lifetime + 5 min).
    advance(defaults.retiredKeyGrace - 10);
    assert.ok((await jwksKids()).includes(first), 'kept while its tokens may be live');
    advance(20);
    assert.deepEqual(await jwksKids(), [next]);
    assert.equal(await active(stillOld), false);
    assert.equal(kidOf(await issue()), next);
  });

  test('a manual rotation while a scheduled key waits retires every other key now', async () => {
    advance(30 * DAY);
    const current = kidOf(await issue());
    const scheduled = await rotateKeysOnSchedule(t.ctx);
    assert.ok(scheduled);
    const manual = await rotateSigningKey(t.ctx.db, t.ctx.encryptor, t.clock);
    assert.notEqual(manual, current);
    advance(1);
    assert.equal(kidOf(await issue()), manual, 'the manual key signs at once');
    advance(defaults.retiredKeyGrace);
    assert.deepEqual(await jwksKids(), [manual], 'the current and the scheduled key leave after the grace');
  });

  test('a missed schedule (instances down) still publishes the new key a day ahead', async () => {
    advance(30 * DAY);
    const kid = await rotateKeysOnSchedule(t.ctx);
    assert.ok(kid);
    advance(1);
    assert.ok((await jwksKids()).includes(kid));
    assert.notEqual(kidOf(await issue()), kid, 'not signing yet');
    advance(DAY);
    assert.equal(kidOf(await issue()), kid);
  });
});
