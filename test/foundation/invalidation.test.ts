import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { sql } from 'kysely';
import { rotateSigningKey } from '../../src/stores/signing-keys.store.js';
import { sha256 } from '../../src/lib/hash.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { form } from '../helpers/oidc.js';
import { randomAddress } from '../token-gates/fake-rpc.js';
import { brandUrl, call, createBrand } from '../brands/setup.js';

/**
 * Two instances on one store (two connection pools on PostgreSQL; one embedded database in process on
 * PGlite): a change of security state on one takes effect on the other at once, not when the other's
 * cache entry expires. `sync()` waits until the other instance's invalidation channel has delivered
 * everything committed before it (no sleeping, no clock games).
 */
describe('caches of security state across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;
  let org: TestOrg;
  let brand: { slug: string };
  let clientId: string;
  let secret: string;

  before(async () => {
    a = await buildTestApp();
    b = await buildTestApp({ shareWith: a });
    owner = await createUser(a);
    org = await seedOrg(a, owner);
    brand = await createBrand(a, owner, org);
    const scope = await call(a, owner, 'POST', `${brandUrl(org, brand.slug)}/scopes`, {
      name: 'orders:read',
      description: 'Read orders',
    });
    assert.equal(scope.status, 201, scope.raw);
    const created = await call(a, owner, 'POST', `${brandUrl(org, brand.slug)}/apps`, {
      name: 'Service',
      type: 'web',
      isConfidential: true,
      redirectUris: [],
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders:read'],
    });
    assert.equal(created.status, 201, created.raw);
    clientId = created.body.clientId;
    secret = created.body.clientSecret;
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  const token = (t: TestApp, s: string) => {
    const f = form({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: s,
      scope: 'orders:read',
    });
    return t.app.inject({ method: 'POST', url: '/oauth2/token', ...f });
  };

  it('a rotated client secret stops working on the other instance at once', async () => {
    assert.equal((await token(b, secret)).statusCode, 200, 'B has the client cached');
    const rotated = await call(
      a,
      owner,
      'POST',
      `${brandUrl(org, brand.slug)}/apps/${clientId}/rotate-secret`,
    );
    assert.equal(rotated.status, 200, rotated.raw);
    await b.ctx.invalidation.sync();
    const old = await token(b, secret);
    assert.equal(old.statusCode, 401, old.body);
    assert.equal(json(old).error, 'invalid_client');
    secret = rotated.body.clientSecret;
    assert.equal((await token(b, secret)).statusCode, 200);
  });

  it('a disabled app stops working on the other instance at once', async () => {
    assert.equal((await token(b, secret)).statusCode, 200);
    const patched = await call(a, owner, 'PATCH', `${brandUrl(org, brand.slug)}/apps/${clientId}`, {
      enabled: false,
    });
    assert.equal(patched.status, 200, patched.raw);
    await b.ctx.invalidation.sync();
    assert.equal((await token(b, secret)).statusCode, 401);
    const back = await call(a, owner, 'PATCH', `${brandUrl(org, brand.slug)}/apps/${clientId}`, {
      enabled: true,
    });
    assert.equal(back.status, 200, back.raw);
    await b.ctx.invalidation.sync();
    assert.equal((await token(b, secret)).statusCode, 200);
  });

  it('a new signing key is used and published by the other instance at once', async () => {
    const before = json(await b.app.inject({ url: '/.well-known/jwks.json' }));
    const kid = await rotateSigningKey(a.ctx.db, a.ctx.encryptor, a.clock);
    await b.ctx.invalidation.sync();
    const jwks = json(await b.app.inject({ url: '/.well-known/jwks.json' }));
    assert.ok(!before.keys.some((k: { kid: string }) => k.kid === kid));
    assert.ok(jwks.keys.some((k: { kid: string }) => k.kid === kid));
    const issued = json(await token(b, secret));
    assert.equal(decodeProtectedHeader(issued.access_token).kid, kid);
  });

  it('a deleted token gate is gone on the other instance at once', async () => {
    const gates = `/identity/organizations/${org.slug}/token-gates`;
    const created = await call(a, owner, 'POST', gates, {
      name: 'Holders',
      mintAddress: randomAddress(),
      minHoldings: '1',
      enabled: false,
    });
    assert.equal(created.status, 201, created.raw);
    const check = () =>
      b.app.inject({ url: `${gates}/${created.body.id}/check?walletAddress=${randomAddress()}` });
    const first = await check();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(json(first).reason, 'gateDisabled');
    assert.equal((await call(a, owner, 'DELETE', `${gates}/${created.body.id}`)).status, 204);
    await b.ctx.invalidation.sync();
    assert.equal((await check()).statusCode, 404);
  });

  it('fails closed on PostgreSQL: a lost channel turns the caches off until it is back', {
    skip: !process.env.DATABASE_URL,
  }, async () => {
    const c = await buildTestApp({ shareWith: a });
    try {
      const flipped = () =>
        new Promise<void>((resolve) => {
          const off = c.ctx.invalidation.on('app', (key) => {
            if (key === '*') {
              off();
              resolve();
            }
          });
        });
      assert.equal((await token(c, secret)).statusCode, 200, 'C has the client cached');
      const down = flipped();
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
                  where application_name = ${`gatehouse-invalidation-${c.ctx.invalidation.id}`}`.execute(
        a.ctx.db,
      );
      await down;
      assert.equal(c.ctx.invalidation.healthy, false);
      // Changed behind C's back while it cannot hear: C reads the database, so it sees it.
      const behind = 'rotated-while-the-channel-was-down';
      await a.ctx.db
        .updateTable('apps')
        .set({ client_secret_hash: sha256(behind) })
        .where('client_id', '=', clientId)
        .execute();
      assert.equal((await token(c, secret)).statusCode, 401);
      assert.equal((await token(c, behind)).statusCode, 200);
      const up = flipped();
      await up;
      assert.equal(c.ctx.invalidation.healthy, true, 'listening again after the reconnect');
      secret = behind;
    } finally {
      await c.close();
    }
  });

  /** Resolves when `t`'s caches are dropped whole (the bus changed state); rejects after `ms`. */
  const flippedWithin = (t: TestApp, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error('the channel did not change state'));
      }, ms);
      const off = t.ctx.invalidation.on('app', (key) => {
        if (key === '*') {
          clearTimeout(timer);
          off();
          resolve();
        }
      });
    });

  it('a channel that silently stops delivering is caught by the heartbeat: caches off, then back', async () => {
    const c = await buildTestApp({ shareWith: a });
    try {
      c.ctx.invalidation.setHeartbeat({ intervalMs: 20, timeoutMs: 100, retryMs: 20 });
      assert.equal((await token(c, secret)).statusCode, 200, 'C has the client cached');
      // A half-open connection: no error, no notification.
      c.ctx.invalidation.deaf = true;
      const down = flippedWithin(c, 3000);
      const rotated = await call(
        a,
        owner,
        'POST',
        `${brandUrl(org, brand.slug)}/apps/${clientId}/rotate-secret`,
      );
      assert.equal(rotated.status, 200, rotated.raw);
      await down;
      assert.equal(c.ctx.invalidation.healthy, false);
      // C never heard of the rotation, yet refuses the old secret: it reads through.
      assert.equal((await token(c, secret)).statusCode, 401);
      secret = rotated.body.clientSecret;
      assert.equal((await token(c, secret)).statusCode, 200);
      // Reconnecting does not count as listening until a notification made it through.
      assert.equal(c.ctx.invalidation.healthy, false);
      const up = flippedWithin(c, 3000);
      c.ctx.invalidation.deaf = false;
      await up;
      assert.equal(c.ctx.invalidation.healthy, true, 'listening again');
    } finally {
      await c.close();
    }
  });

  it('announces a change in its transaction: a lost statement after the commit leaves no instance stale', async () => {
    assert.equal((await token(b, secret)).statusCode, 200, 'B has the client cached');
    // A's notifications sent on their own after a commit are lost (the process died, pg_notify failed).
    const bus = a.ctx.invalidation;
    const publish = bus.publish.bind(bus);
    bus.publish = async (topic, keys, trx) => {
      if (trx) return publish(topic, keys, trx);
      for (const k of keys) bus.deliverLocal(topic, k);
    };
    try {
      const rotated = await call(
        a,
        owner,
        'POST',
        `${brandUrl(org, brand.slug)}/apps/${clientId}/rotate-secret`,
      );
      assert.equal(rotated.status, 200, rotated.raw);
      await b.ctx.invalidation.sync();
      assert.equal((await token(b, secret)).statusCode, 401, 'B refuses the old secret');
      assert.equal((await token(a, secret)).statusCode, 401, 'A refuses it at once');
      secret = rotated.body.clientSecret;
      assert.equal((await token(b, secret)).statusCode, 200);
    } finally {
      bus.publish = publish;
    }
  });

  it('fails closed: with its channel down an instance serves nothing from its caches', async () => {
    const c = await buildTestApp({ shareWith: a });
    try {
      assert.equal((await token(c, secret)).statusCode, 200, 'C has the client cached');
      assert.equal(c.ctx.invalidation.healthy, true);
      await c.ctx.invalidation.stop();
      assert.equal(c.ctx.invalidation.healthy, false);
      // A change no notification announces (C is not listening anyway): C must still see it.
      const fresh = 'rotated-behind-the-channel';
      await a.ctx.db
        .updateTable('apps')
        .set({ client_secret_hash: sha256(fresh) })
        .where('client_id', '=', clientId)
        .execute();
      assert.equal((await token(c, secret)).statusCode, 401);
      assert.equal((await token(c, fresh)).statusCode, 200);
    } finally {
      await c.close();
    }
  });
});
