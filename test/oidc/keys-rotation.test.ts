import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { defaults } from '../../src/config/defaults.js';
import { rotateSigningKey } from '../../src/stores/signing-keys.store.js';
import { type TestApp, buildTestApp, json } from '../helpers/app.js';
import { type TestClient, createApp, createBrand, form } from '../helpers/oidc.js';

let t: TestApp;
let service: TestClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
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

async function active(token: string): Promise<boolean> {
  const f = form({ token, client_id: service.clientId, client_secret: service.clientSecret });
  return json(await t.app.inject({ method: 'POST', url: '/oauth2/introspect', ...f })).active;
}

async function jwksKids(): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  return json(res).keys.map((k: { kid: string }) => k.kid);
}

describe('signing key rotation under traffic', () => {
  test('tokens signed by the old key keep verifying until they expire; new tokens use the new key', async () => {
    const old = await issue();
    const oldKid = decodeProtectedHeader(old).kid as string;

    const newKid = await rotateSigningKey(t.ctx.db, t.ctx.encryptor, t.clock);
    // Instances reread the key set within keySetRefreshMs; the clock moves past it.
    t.clock.advance(defaults.keySetRefreshMs / 1000 + 1);
    const fresh = await issue();
    assert.equal(decodeProtectedHeader(fresh).kid, newKid);
    assert.notEqual(newKid, oldKid);
    assert.deepEqual((await jwksKids()).sort(), [newKid, oldKid].sort());

    assert.equal(await active(old), true);
    assert.equal(await active(fresh), true);
    t.clock.advance(3600 - 2 - 1);
    assert.equal(await active(old), true, 'still valid just before its exp');
    t.clock.advance(1);
    assert.equal(await active(old), false, 'expired');
    assert.equal(await active(await issue()), true);

    // The retired key leaves the JWKS once every token it signed has expired.
    t.clock.advance(defaults.retiredKeyGrace);
    assert.deepEqual(await jwksKids(), [newKid]);
  });
});

describe('key set reads racing a rotation', () => {
  test('a read that started before a rotation is not kept once the rotation invalidated the key set', async () => {
    const store = t.ctx.keys as unknown as { load(): Promise<unknown> };
    const realLoad = store.load.bind(store);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let read!: () => void;
    const readDone = new Promise<void>((resolve) => {
      read = resolve;
    });
    // The read completes before the rotation commits; its answer comes back after the invalidation.
    store.load = async () => {
      const state = await realLoad();
      read();
      await held;
      return state;
    };
    let newKid: string;
    try {
      const pending = t.ctx.keys.reload();
      await readDone;
      newKid = await rotateSigningKey(t.ctx.db, t.ctx.encryptor, t.clock);
      await t.ctx.invalidation.sync();
      release();
      await pending;
    } finally {
      store.load = realLoad;
    }
    assert.ok((await jwksKids()).includes(newKid), 'the JWKS lists the new key');
  });
});
