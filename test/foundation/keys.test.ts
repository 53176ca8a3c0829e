import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { newSigningKeyRow } from '../../src/oidc/keys.js';
import { rotateSigningKey } from '../../src/stores/signing-keys.store.js';
import { createContext } from '../../src/wiring.js';
import { buildTestApp, consoleToken, json, type TestApp } from '../helpers/app.js';

describe('signing keys', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('stores the private key encrypted, never in clear', async () => {
    const rows = await t.ctx.db.selectFrom('signing_keys').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.match(rows[0].private_key_enc, /^v1\./);
    assert.ok(!rows[0].private_key_enc.includes('PRIVATE KEY'));
  });

  it('makes a new key off the event loop: the loop turns while the primes are found', async () => {
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    // Made on the event loop, the key would be done before this call returned, and the await would
    // resume in a microtask, before any immediate.
    const row = await newSigningKeyRow(t.ctx.encryptor, t.clock);
    assert.ok(turned, 'an immediate ran while the key was made');
    assert.equal(row.public_jwk.kty, 'RSA');
    assert.equal(Buffer.from(row.public_jwk.n as string, 'base64url').length, 256);
  });

  it('rotation signs with the new key at once and keeps the old one until its tokens expire', async () => {
    const oldToken = await consoleToken(t, 'usr_rot');
    const oldKid = JSON.parse(Buffer.from(oldToken.split('.')[0], 'base64url').toString()).kid;
    const newKid = await rotateSigningKey(t.ctx.db, t.ctx.encryptor, t.clock);
    t.clock.advance(2); // past the key-set refresh interval
    const newToken = await consoleToken(t, 'usr_rot');
    assert.equal(JSON.parse(Buffer.from(newToken.split('.')[0], 'base64url').toString()).kid, newKid);

    let jwks = json(await t.app.inject('/.well-known/jwks.json'));
    assert.deepEqual(jwks.keys.map((k: { kid: string }) => k.kid).sort(), [oldKid, newKid].sort());
    for (const token of [oldToken, newToken]) {
      await jwtVerify(token, createLocalJWKSet(jwks), { currentDate: t.clock.now() });
    }
    const me = await t.app.inject({ url: '/readyz' });
    assert.equal(me.statusCode, 200);

    // After the longest token lifetime (+ margin) the retired key leaves the set.
    t.clock.advance(3600 + 301);
    jwks = json(await t.app.inject('/.well-known/jwks.json'));
    assert.deepEqual(
      jwks.keys.map((k: { kid: string }) => k.kid),
      [newKid],
    );
  });
});

describe('persistence of the embedded database', () => {
  it('keeps keys and data across restarts in DATA_DIR', async (tc) => {
    if (process.env.DATABASE_URL) return tc.skip('embedded database only');
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-data-'));
    const env = { NODE_ENV: 'test', DATA_DIR: dir, LOG_LEVEL: 'silent', BASE_URL: 'http://gatehouse.test' };
    try {
      const first = await createContext(
        loadConfig(env, () => {}),
        { warn: () => {} },
      );
      const app1 = await buildApp(first);
      const jwks1 = (await app1.inject('/.well-known/jwks.json')).body;
      await app1.close();
      const second = await createContext(
        loadConfig(env, () => {}),
        { warn: () => {} },
      );
      const app2 = await buildApp(second);
      const jwks2 = (await app2.inject('/.well-known/jwks.json')).body;
      const consoleApp = await second.db
        .selectFrom('apps')
        .select('client_id')
        .where('client_id', '=', 'console')
        .execute();
      await app2.close();
      assert.equal(jwks2, jwks1);
      assert.equal(consoleApp.length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
