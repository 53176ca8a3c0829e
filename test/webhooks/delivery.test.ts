import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { WebhookWorker } from '../../src/modules/webhooks/worker.js';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, consoleToken, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { fireEvent, Receiver, selfSignedCert } from './receiver.js';

/** PGlite runs on this thread: a generous deadline, except where a test is about the timeout. */
const RELAXED_MS = 5000;
const SHORT_MS = 300;

const PRIVATE_OK = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MULTIPLIER: '100' };

/** The worker, stopped so the test drives it, trusting the receiver's certificate. */
async function driven(t: TestApp, timeoutMs?: number): Promise<WebhookWorker> {
  const w = webhookWorker(t.ctx);
  await w.stop();
  w.configureClient({ ca: selfSignedCert().cert, timeoutMs });
  return w;
}

function hexSignatureValid(secret: string, raw: Buffer, header: string): boolean {
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(raw)
    .digest();
  const given = Buffer.from(header, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('webhook delivery', () => {
  let t: TestApp;
  let worker: WebhookWorker;
  let rx: Receiver;
  let owner: TestUser;
  let org: TestOrg;
  let base: string;
  let n = 0;

  before(async () => {
    // The wall clock: the Standard Webhooks verifier checks the timestamp against it.
    t = await buildTestApp({ env: PRIVATE_OK, clock: new ManualClock() });
    worker = await driven(t, RELAXED_MS);
    rx = await Receiver.start();
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    base = `/identity/organizations/${org.slug}/webhooks`;
  });
  after(async () => {
    await t.close();
    await rx.close();
  });
  /** Tests move the clock by hours; a fresh token keeps the owner signed in. */
  async function refreshToken() {
    owner.auth = { authorization: `Bearer ${await consoleToken(t, owner.id)}` };
  }
  beforeEach(async () => {
    rx.reply = () => ({ status: 200, body: 'ok' });
    await refreshToken();
  });

  /** A webhook on its own receiver path, so each test counts only its own requests. */
  async function hook(events: string[] = ['*'], o = org) {
    const path = `/h${++n}`;
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${o.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url(path), events },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { ...json(res), path } as { id: string; secret: string; path: string; url: string };
  }

  const deliveries = async (id: string, qs = '') =>
    json(await t.app.inject({ url: `${base}/${id}/deliveries${qs}`, headers: owner.auth }));
  const getHook = async (id: string) =>
    json(await t.app.inject({ url: `${base}/${id}`, headers: owner.auth }));

  it('signs the raw body (hex HMAC) and the Standard Webhooks headers, with the interface headers', async () => {
    const h = await hook(['member.added']);
    await fireEvent(t, org, owner, 'member.added', { user: 'usr_x', roles: ['Member'] });
    assert.equal(await worker.runOnce(), 1);
    const [got] = rx.on(h.path);
    assert.ok(got, 'delivered');
    const hd = got.headers;
    assert.equal(hd['content-type'], 'application/json');
    assert.match(hd['user-agent'] as string, /^Service-Webhooks\/1\.\d+$/);
    assert.equal(hd['service-event'], 'member.added');
    assert.match(
      hd['service-delivery'] as string,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.equal(hd['service-timestamp'], String(t.clock.nowSec()));
    assert.equal(hd['webhook-id'], hd['service-delivery']);
    assert.equal(hd['webhook-timestamp'], hd['service-timestamp']);

    // Verify before parsing, over the raw bytes.
    assert.ok(hexSignatureValid(h.secret, got.raw, hd['service-signature'] as string));
    assert.ok(
      !hexSignatureValid(
        h.secret,
        Buffer.concat([got.raw, Buffer.from(' ')]),
        hd['service-signature'] as string,
      ),
    );
    const verified = new StandardWebhook(h.secret).verify(got.raw.toString('utf8'), {
      'webhook-id': hd['webhook-id'] as string,
      'webhook-timestamp': hd['webhook-timestamp'] as string,
      'webhook-signature': hd['webhook-signature'] as string,
    }) as Record<string, unknown>;
    assert.deepEqual(verified, JSON.parse(got.raw.toString('utf8')));
    assert.throws(() =>
      new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        got.raw.toString('utf8'),
        {
          'webhook-id': hd['webhook-id'] as string,
          'webhook-timestamp': hd['webhook-timestamp'] as string,
          'webhook-signature': hd['webhook-signature'] as string,
        },
      ),
    );

    const body = JSON.parse(got.raw.toString('utf8'));
    assert.deepEqual(Object.keys(body), ['id', 'type', 'timestamp', 'org', 'actorUserId', 'data']);
    assert.equal(body.id, hd['service-delivery']);
    assert.equal(body.type, 'member.added');
    assert.equal(body.org, org.slug);
    assert.equal(body.actorUserId, owner.id);
    assert.equal(body.timestamp, t.clock.now().toISOString());
    assert.deepEqual(body.data, { user: 'usr_x', roles: ['Member'] });

    const log = await deliveries(h.id);
    assert.equal(log.total, 1);
    assert.deepEqual(log.items[0], {
      id: body.id,
      event: 'member.added',
      url: h.url,
      status: 'succeeded',
      responseCode: 200,
      responseBodyExcerpt: 'ok',
      attemptCount: 1,
      queuedAt: t.clock.now().toISOString(),
      deliveredAt: t.clock.now().toISOString(),
    });
    assert.equal((await getHook(h.id)).lastDeliveredAt, t.clock.now().toISOString());
  });

  it('a running worker sends a new delivery as soon as its transaction commits (no poll)', async () => {
    const h = await hook(['oidcClient.secret.rotated']);
    // A poll interval far beyond the test: only the commit-time notification can wake it.
    const live = new WebhookWorker(t.ctx, { pollIntervalMs: 600_000, client: { ca: selfSignedCert().cert } });
    await live.start();
    try {
      await new Promise((r) => setTimeout(r, 100)); // its first (empty) claim is done; it now sleeps
      const firedAt = Date.now();
      await fireEvent(t, org, owner, 'oidcClient.secret.rotated', { clientId: 'c' });
      while (rx.on(h.path).length === 0 && Date.now() - firedAt < 5000)
        await new Promise((r) => setTimeout(r, 10));
      assert.equal(rx.on(h.path).length, 1);
      assert.ok(Date.now() - firedAt < 5000);
    } finally {
      await live.close();
    }
    const [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'succeeded');
  });

  it('retries a 500 on the schedule with the same id and the same bytes, then succeeds', async () => {
    const h = await hook(['tokenGate.created']);
    rx.reply = () => ({ status: 500, body: 'x'.repeat(300) });
    await fireEvent(t, org, owner, 'tokenGate.created', {
      gateId: 'g',
      name: 'G',
      mintAddress: 'm',
      minHoldings: 1,
      enabled: true,
    });
    await worker.runOnce();
    let [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'pending');
    assert.equal(d.responseCode, 500);
    assert.equal(d.responseBodyExcerpt, 'x'.repeat(200));
    assert.equal(d.attemptCount, 1);
    assert.equal(d.nextAttemptAt, new Date(t.clock.nowMs() + 1000).toISOString());

    assert.equal(await worker.runOnce(), 0, 'not due before its time');
    t.clock.advance(1);
    await worker.runOnce();
    [d] = (await deliveries(h.id)).items;
    assert.equal(d.attemptCount, 2);
    assert.equal(d.nextAttemptAt, new Date(t.clock.nowMs() + 4000).toISOString());

    rx.reply = () => ({ status: 204 });
    t.clock.advance(4);
    await worker.runOnce();
    [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attemptCount, 3);
    assert.equal(d.responseCode, 204);
    assert.equal(d.nextAttemptAt, undefined);

    const got = rx.on(h.path);
    assert.equal(got.length, 3);
    assert.equal(new Set(got.map((g) => g.headers['service-delivery'])).size, 1);
    assert.ok(
      got.every((g) => g.raw.equals(got[0].raw)),
      'identical body bytes on every attempt',
    );
    assert.ok(got.every((g) => hexSignatureValid(h.secret, g.raw, g.headers['service-signature'] as string)));
  });

  it('exhausts 5 retries and keeps the last failure status; a slow receiver is failed_timeout', async (tc) => {
    const h = await hook(['consent.granted']);
    worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: SHORT_MS });
    tc.after(() => worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: RELAXED_MS }));
    let calls = 0;
    rx.reply = () => (++calls < 6 ? { status: 503 } : { status: 200, delayMs: 1000 });
    await fireEvent(t, org, owner, 'consent.granted', { user: 'u', app: 'a', scopes: ['openid'] });
    for (const delay of [0, 1, 4, 16, 64]) {
      t.clock.advance(delay);
      assert.equal(await worker.runOnce(), 1);
      const [d] = (await deliveries(h.id)).items;
      assert.equal(d.status, 'pending');
      assert.equal(d.responseCode, 503);
    }
    t.clock.advance(256);
    const started = Date.now();
    await worker.runOnce();
    assert.ok(Date.now() - started < 950, 'the injected timeout (300 ms) applies');
    const [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'failed_timeout');
    assert.equal(d.attemptCount, 6);
    assert.equal(d.responseCode, undefined);
    assert.equal(d.nextAttemptAt, undefined);
    assert.equal(rx.on(h.path).length, 6);
    t.clock.advance(1000);
    assert.equal(await worker.runOnce(), 0, 'nothing left to retry');
    assert.equal((await getHook(h.id)).consecutiveFailures, 1);
  });

  it('a slow first attempt is failed_timeout and retried', async (tc) => {
    const h = await hook(['oidcClient.deleted']);
    worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: SHORT_MS });
    tc.after(() => worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: RELAXED_MS }));
    rx.reply = () => ({ status: 200, delayMs: 1000 });
    await fireEvent(t, org, owner, 'oidcClient.deleted', { clientId: 'c', brand: 'b' });
    await worker.runOnce();
    let [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'pending');
    assert.equal(d.attemptCount, 1);
    assert.ok(d.nextAttemptAt);
    rx.reply = () => ({ status: 200 });
    t.clock.advance(1);
    await worker.runOnce();
    [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'succeeded');
    const got = rx.on(h.path);
    assert.equal(got.length, 2);
    assert.equal(got[0].headers['service-delivery'], got[1].headers['service-delivery']);
  });

  it('does not follow redirects: a 3xx is failed_status', async () => {
    const h = await hook(['socialProvider.enabled']);
    const target = `/redirect-target-${n}`;
    rx.reply = (r) =>
      r.path === target ? { status: 200 } : { status: 302, headers: { location: rx.url(target) } };
    await fireEvent(t, org, owner, 'socialProvider.enabled', { brand: 'b', type: 'google' });
    await worker.runOnce();
    const [d] = (await deliveries(h.id)).items;
    assert.equal(d.status, 'pending');
    assert.equal(d.responseCode, 302);
    assert.equal(rx.on(target).length, 0);
    await t.app.inject({ method: 'DELETE', url: `${base}/${h.id}`, headers: owner.auth });
  });

  it('counts exhausted deliveries, disables at 20, and PATCH enabled: true resets the count', async () => {
    const o = await seedOrg(t, owner);
    const p = `/identity/organizations/${o.slug}/webhooks`;
    const h = await hook(['member.removed'], o);
    const ok = await hook(['member.removed'], o);
    rx.reply = (r) => (r.path === h.path ? { status: 500 } : { status: 200 });
    for (let i = 0; i < 21; i++)
      await fireEvent(t, o, owner, 'member.removed', { user: `u${i}`, removedRoles: [] });
    // 21 deliveries each: 20 exhaust their retries and disable the webhook; then the rest pause.
    for (const delay of [0, 1, 4, 16, 64]) {
      t.clock.advance(delay);
      await worker.runOnce();
    }
    let w = json(await t.app.inject({ url: `${p}/${h.id}`, headers: owner.auth }));
    assert.equal(w.consecutiveFailures, 0, 'pending retries are not failures yet');
    t.clock.advance(256);
    await worker.runOnce();
    await refreshToken();
    w = json(await t.app.inject({ url: `${p}/${h.id}`, headers: owner.auth }));
    assert.equal(w.consecutiveFailures, 21);
    assert.equal(w.enabled, false);
    assert.equal(w.disabledAt, t.clock.now().toISOString());
    const healthy = json(await t.app.inject({ url: `${p}/${ok.id}`, headers: owner.auth }));
    assert.equal(healthy.enabled, true);
    assert.equal(healthy.consecutiveFailures, 0);
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .selectAll()
      .where('resource_id', '=', h.id)
      .where('action', '=', 'webhook.disabled')
      .execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0].actor_user_id, null);

    // Disabled: new events queue nothing, and nothing is sent.
    const before = rx.on(h.path).length;
    await fireEvent(t, o, owner, 'member.removed', { user: 'late', removedRoles: [] });
    await worker.runOnce();
    assert.equal(rx.on(h.path).length, before);
    assert.equal(
      json(await t.app.inject({ url: `${p}/${h.id}/deliveries?limit=200`, headers: owner.auth })).total,
      21,
      'no delivery queued for a disabled webhook (the log is per webhook)',
    );

    const res = await t.app.inject({
      method: 'PATCH',
      url: `${p}/${h.id}`,
      headers: owner.auth,
      payload: { enabled: true },
    });
    assert.equal(res.statusCode, 200);
    w = json(res);
    assert.equal(w.enabled, true);
    assert.equal(w.consecutiveFailures, 0);
    assert.equal(w.disabledAt, undefined);
  });

  it('exactly 20 consecutive failures disable the webhook; a success in between resets the count', async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(['member.role.changed'], o);
    let fail = true;
    rx.reply = () => (fail ? { status: 500 } : { status: 200 });
    const exhaust = async (count: number) => {
      for (let i = 0; i < count; i++)
        await fireEvent(t, o, owner, 'member.role.changed', { user: 'u', added: [], removed: [] });
      for (const delay of [0, 1, 4, 16, 64, 256]) {
        t.clock.advance(delay);
        await worker.runOnce();
      }
      await refreshToken();
    };
    await exhaust(19);
    const p = `/identity/organizations/${o.slug}/webhooks/${h.id}`;
    assert.equal(json(await t.app.inject({ url: p, headers: owner.auth })).consecutiveFailures, 19);
    fail = false;
    await fireEvent(t, o, owner, 'member.role.changed', { user: 'u', added: [], removed: [] });
    await worker.runOnce();
    assert.equal(json(await t.app.inject({ url: p, headers: owner.auth })).consecutiveFailures, 0);
    fail = true;
    await exhaust(19);
    assert.equal(json(await t.app.inject({ url: p, headers: owner.auth })).enabled, true);
    await exhaust(1);
    const w = json(await t.app.inject({ url: p, headers: owner.auth }));
    assert.equal(w.consecutiveFailures, 20);
    assert.equal(w.enabled, false);
    assert.ok(w.disabledAt);
  });

  it('the test route answers with the first attempt inline and the worker retries it', async () => {
    const h = await hook(['member.added']);
    const res = await t.app.inject({ method: 'POST', url: `${base}/${h.id}/test`, headers: owner.auth });
    assert.equal(res.statusCode, 200);
    const { delivery } = json(res);
    assert.equal(delivery.event, 'webhook.test');
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attemptCount, 1);
    assert.equal(delivery.responseCode, 200);
    assert.equal(delivery.url, h.url);
    const [got] = rx.on(h.path);
    assert.equal(got.headers['service-delivery'], delivery.id);
    assert.equal(got.headers['service-event'], 'webhook.test');
    assert.ok(
      hexSignatureValid(h.secret, got.raw, got.headers['service-signature'] as string),
      'the signature is real',
    );
    assert.deepEqual(JSON.parse(got.raw.toString()).data, { test: true });

    rx.reply = () => ({ status: 500, body: 'down' });
    const failed = json(
      await t.app.inject({ method: 'POST', url: `${base}/${h.id}/test`, headers: owner.auth }),
    ).delivery;
    assert.equal(failed.status, 'pending');
    assert.equal(failed.responseCode, 500);
    assert.equal(failed.responseBodyExcerpt, 'down');
    assert.equal(failed.attemptCount, 1);
    assert.equal(failed.nextAttemptAt, new Date(t.clock.nowMs() + 1000).toISOString());
    assert.equal(await worker.runOnce(), 0, 'the worker does not resend the attempt the route made');
    rx.reply = () => ({ status: 200 });
    t.clock.advance(1);
    assert.equal(await worker.runOnce(), 1);
    const succeeded = (await deliveries(h.id, '?event=webhook.test&status=succeeded')).items;
    const latest = succeeded.find((d: { id: string }) => d.id === failed.id);
    assert.ok(latest, 'the retried test delivery succeeded');
    assert.equal(latest.attemptCount, 2);
  });

  it('replays a delivery with a new id and the same payload', async () => {
    const h = await hook(['oidcClient.created']);
    const data = {
      clientId: 'cid',
      brand: 'b',
      name: 'App',
      type: 'web',
      isConfidential: true,
      redirectUris: [],
      allowedGrantTypes: [],
      allowedScopes: [],
    };
    await fireEvent(t, org, owner, 'oidcClient.created', data);
    await worker.runOnce();
    const [orig] = (await deliveries(h.id)).items;
    t.clock.advance(30);
    const res = await t.app.inject({
      method: 'POST',
      url: `${base}/${h.id}/deliveries/${orig.id}/replay`,
      headers: owner.auth,
    });
    assert.equal(res.statusCode, 201);
    const replay = json(res);
    assert.notEqual(replay.id, orig.id);
    assert.equal(replay.status, 'pending');
    assert.equal(replay.attemptCount, 0);
    assert.equal(replay.event, 'oidcClient.created');
    assert.equal(replay.queuedAt, t.clock.now().toISOString());
    await worker.runOnce();
    const got = rx.on(h.path);
    assert.equal(got.length, 2);
    const [a, b] = got.map((g) => JSON.parse(g.raw.toString()));
    assert.equal(b.id, replay.id);
    assert.equal(got[1].headers['service-delivery'], replay.id);
    assert.deepEqual({ ...b, id: a.id }, a, 'same payload apart from the id');
    assert.equal((await deliveries(h.id)).total, 2);
  });

  it('rotation takes effect at once: the next attempt signs with the new secret only', async () => {
    const h = await hook(['tokenGate.deleted']);
    rx.reply = () => ({ status: 500 });
    await fireEvent(t, org, owner, 'tokenGate.deleted', { gateId: 'g' });
    await worker.runOnce();
    const { secret } = json(
      await t.app.inject({ method: 'POST', url: `${base}/${h.id}/rotate-secret`, headers: owner.auth }),
    );
    rx.reply = () => ({ status: 200 });
    t.clock.advance(1);
    await worker.runOnce();
    const [first, second] = rx.on(h.path);
    assert.ok(hexSignatureValid(h.secret, first.raw, first.headers['service-signature'] as string));
    assert.ok(hexSignatureValid(secret, second.raw, second.headers['service-signature'] as string));
    assert.ok(!hexSignatureValid(h.secret, second.raw, second.headers['service-signature'] as string));
  });

  it('filters the delivery log by status, event, since/until and pages with a total', async () => {
    const o = await seedOrg(t, owner);
    const h = await hook(['member.added', 'member.removed'], o);
    const p = `/identity/organizations/${o.slug}/webhooks/${h.id}/deliveries`;
    const t0 = t.clock.now().toISOString();
    rx.reply = (r) =>
      JSON.parse(r.raw.toString()).type === 'member.removed' ? { status: 500 } : { status: 200 };
    for (let i = 0; i < 3; i++) {
      await fireEvent(t, o, owner, 'member.added', { user: `a${i}`, roles: [] });
      t.clock.advance(10);
    }
    const t1 = t.clock.now().toISOString();
    for (let i = 0; i < 2; i++) {
      await fireEvent(t, o, owner, 'member.removed', { user: `r${i}`, removedRoles: [] });
      t.clock.advance(10);
    }
    await worker.runOnce();
    const get = async (qs: string) => json(await t.app.inject({ url: `${p}?${qs}`, headers: owner.auth }));
    assert.equal((await get('')).total, 5);
    assert.equal((await get('status=succeeded')).total, 3);
    assert.equal((await get('status=pending')).total, 2);
    assert.equal((await get('status=failed_status')).total, 0);
    assert.equal((await get('event=member.removed')).total, 2);
    assert.equal((await get(`since=${t1}`)).total, 2, 'since is inclusive');
    assert.equal((await get(`until=${t1}`)).total, 3, 'until is exclusive');
    assert.equal((await get(`since=${t0}&until=${t0}`)).total, 0);
    const page = await get('limit=2&offset=1');
    assert.equal(page.total, 5);
    assert.equal(page.items.length, 2);
    const all = (await get('')).items;
    assert.deepEqual(
      page.items.map((d: { id: string }) => d.id),
      all.slice(1, 3).map((d: { id: string }) => d.id),
    );
    assert.ok(all[0].queuedAt >= all[4].queuedAt, 'newest first');
    await t.app.inject({ method: 'DELETE', url: p.replace('/deliveries', ''), headers: owner.auth });
  });

  it('deleting a webhook stops its pending deliveries', async () => {
    const h = await hook(['consent.revoked']);
    rx.reply = () => ({ status: 500 });
    await fireEvent(t, org, owner, 'consent.revoked', { user: 'u', app: 'a', scopes: [] });
    await worker.runOnce();
    await t.app.inject({ method: 'DELETE', url: `${base}/${h.id}`, headers: owner.auth });
    t.clock.advance(300);
    assert.equal(await worker.runOnce(), 0);
    assert.equal(rx.on(h.path).length, 1);
  });

  it('a disabled webhook gets nothing new, and its pending retries wait until it is re-enabled', async () => {
    const h = await hook(['socialProvider.disabled']);
    rx.reply = () => ({ status: 500 });
    await fireEvent(t, org, owner, 'socialProvider.disabled', { brand: 'b', type: 'x' });
    await worker.runOnce();
    await t.app.inject({
      method: 'PATCH',
      url: `${base}/${h.id}`,
      headers: owner.auth,
      payload: { enabled: false },
    });
    await fireEvent(t, org, owner, 'socialProvider.disabled', { brand: 'b', type: 'x' });
    t.clock.advance(5);
    assert.equal(await worker.runOnce(), 0);
    assert.equal((await deliveries(h.id)).total, 1);
    rx.reply = () => ({ status: 200 });
    await t.app.inject({
      method: 'PATCH',
      url: `${base}/${h.id}`,
      headers: owner.auth,
      payload: { enabled: true },
    });
    assert.equal(await worker.runOnce(), 1);
    assert.equal((await deliveries(h.id)).items[0].status, 'succeeded');
  });
});

describe('webhook delivery across instances', () => {
  let a: TestApp;
  let b: TestApp | undefined;
  let rx: Receiver;
  let owner: TestUser;
  let org: TestOrg;

  before(async () => {
    a = await buildTestApp({ env: PRIVATE_OK });
    rx = await Receiver.start();
    owner = await createUser(a);
    org = await seedOrg(a, owner);
  });
  after(async () => {
    await b?.close();
    await a.close();
    await rx.close();
  });

  it('a pending delivery survives a restart and completes with the same id on another instance', async () => {
    const wa = await driven(a);
    const res = await a.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url('/restart'), events: ['member.added'] },
    });
    const h = json(res);
    rx.reply = () => ({ status: 500 });
    await fireEvent(a, org, owner, 'member.added', { user: 'u', roles: [] });
    await wa.runOnce();
    await wa.close(); // the instance goes away between attempts

    b = await buildTestApp({ env: PRIVATE_OK, shareWith: a });
    const wb = await driven(b);
    rx.reply = () => ({ status: 200 });
    a.clock.advance(1);
    assert.equal(await wb.runOnce(), 1);
    const got = rx.on('/restart');
    assert.equal(got.length, 2);
    assert.equal(got[0].headers['service-delivery'], got[1].headers['service-delivery']);
    assert.ok(got[1].raw.equals(got[0].raw));
    const log = json(
      await b.app.inject({
        url: `/identity/organizations/${org.slug}/webhooks/${h.id}/deliveries`,
        headers: owner.auth,
      }),
    );
    assert.equal(log.items[0].status, 'succeeded');
    assert.equal(log.items[0].attemptCount, 2);
  });

  it('two instances on one database send each attempt once', async () => {
    b ??= await buildTestApp({ env: PRIVATE_OK, shareWith: a });
    const wa = await driven(a);
    const wb = await driven(b);
    const res = await a.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url('/twice'), events: ['tokenGate.updated'] },
    });
    assert.equal(res.statusCode, 201);
    rx.reply = () => ({ status: 200 });
    for (let i = 0; i < 150; i++)
      await fireEvent(a, org, owner, 'tokenGate.updated', { gateId: `g${i}`, before: {}, after: {} });
    let sent = 0;
    for (let round = 0; round < 5; round++) {
      const [x, y] = await Promise.all([wa.runOnce(), wb.runOnce()]);
      sent += x + y;
    }
    const got = rx.on('/twice');
    assert.equal(sent, 150);
    assert.equal(got.length, 150);
    assert.equal(new Set(got.map((g) => g.headers['service-delivery'])).size, 150);
  });

  it('a lease that expired (crashed instance) is claimed again; a live lease is not', async () => {
    const wa = await driven(a);
    const res = await a.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url('/lease'), events: ['consent.granted'] },
    });
    assert.equal(res.statusCode, 201);
    await fireEvent(a, org, owner, 'consent.granted', { user: 'u', app: 'a', scopes: [] });
    // Simulate an instance that claimed the row and died before recording.
    const now = a.clock.now();
    await a.ctx.db
      .updateTable('webhook_deliveries')
      .set({ attempt_count: 1, locked_until: wa.leaseUntil(now) })
      .where('url', '=', rx.url('/lease'))
      .execute();
    assert.equal(await wa.runOnce(), 0);
    a.clock.advance(60);
    assert.equal(await wa.runOnce(), 1);
    assert.equal(rx.on('/lease').length, 1);
  });
});
