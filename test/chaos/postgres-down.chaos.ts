import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/lib/clock.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, json, type TestApp } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import { ChaosReceiver, Instance, PrivatePostgres, runEnv, storesOrSkip, until } from './cluster.js';

const MINT = 'So11111111111111111111111111111111111111112';

interface Outcome {
  name: string;
  status: number;
  code?: string;
  id?: string;
  ms: number;
  during: 'up' | 'down' | 'recovering';
}

/**
 * PostgreSQL stopped under load and started again (a private cluster the test owns; the machine's
 * shared one is never touched): requests fail fast with 503 `service_unavailable`, /readyz says
 * so, the pools recover by themselves, no mutation is half-written (token gate, audit entry, event
 * and webhook delivery all or none), and no delivery of a committed mutation is lost.
 */
describe('chaos: PostgreSQL down under load', { timeout: 240_000 }, () => {
  let pg: PrivatePostgres | undefined;
  let t: TestApp | undefined;
  let rx: ChaosReceiver | undefined;
  const instances: Instance[] = [];
  after(async () => {
    for (const i of instances) await i.stop().catch(() => {});
    await t?.close().catch(() => {});
    await rx?.close();
    await pg?.destroy();
  });

  it('fails fast with 503 while down, recovers by itself, writes all or nothing, loses no delivery', async (tc) => {
    if (!storesOrSkip(tc)) return;
    pg = await PrivatePostgres.start();
    rx = await ChaosReceiver.start();
    const env = runEnv({ DATABASE_URL: pg.url, WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1' });
    t = await buildTestApp({ env, clock: new ManualClock() });
    await webhookWorker(t.ctx).stop();
    const owner = await createUser(t);
    const org = await seedOrg(t, owner);
    const hook = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url('/pg'), events: ['tokenGate.created'] },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    const webhookId = json(hook).id as string;

    const a = await Instance.start('A', env);
    instances.push(a);
    const b = await Instance.start('B', env);
    instances.push(b);

    let phase: Outcome['during'] = 'up';
    let running = true;
    const outcomes: Outcome[] = [];
    let n = 0;
    const load = async (worker: number) => {
      while (running) {
        const target = (n + worker) % 2 === 0 ? a : b;
        const name = `chaos-${++n}`;
        const during = phase;
        const started = performance.now();
        try {
          const res = await target.fetch(`/identity/organizations/${org.slug}/token-gates`, {
            method: 'POST',
            headers: { ...owner.auth, 'content-type': 'application/json' },
            body: JSON.stringify({ name, mintAddress: MINT, minHoldings: '1' }),
            signal: AbortSignal.timeout(15_000),
          });
          const body = (await res.json().catch(() => ({}))) as { id?: string; error?: { code?: string } };
          outcomes.push({
            name,
            status: res.status,
            code: body.error?.code,
            id: body.id,
            ms: performance.now() - started,
            during,
          });
        } catch (e) {
          outcomes.push({
            name,
            status: 0,
            code: (e as Error).name,
            ms: performance.now() - started,
            during,
          });
        }
      }
    };
    const loaders = [0, 1, 2, 3].map(load);

    await until(() => outcomes.filter((o) => o.status === 201).length >= 20, 30_000, 'load to run');
    phase = 'down';
    await pg.down();
    const downAt = outcomes.length;
    // While down: requests answer 503 quickly and /readyz reports it on both instances.
    await until(
      () => outcomes.slice(downAt).filter((o) => o.status === 503).length >= 20,
      30_000,
      '503 answers while down',
    ).catch((e) => {
      throw new Error(
        `${(e as Error).message}: ${JSON.stringify(outcomes.slice(downAt).slice(0, 10))}\n${a.output.slice(-3000)}`,
      );
    });
    for (const i of [a, b]) {
      const r = await i.fetch('/readyz');
      assert.equal(r.status, 503);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'service_unavailable');
    }
    await new Promise((r) => setTimeout(r, 2000));
    phase = 'recovering';
    await pg.up();
    // The pools reconnect by themselves: no restart of the instances.
    await until(
      async () => (await a.fetch('/readyz')).status === 200 && (await b.fetch('/readyz')).status === 200,
      30_000,
      '/readyz to recover',
    );
    // Each worker listens for new deliveries again (not only polling) once the database is back.
    await until(
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where application_name = 'gatehouse-webhook-worker' and query like 'listen%'`.execute(t!.ctx.db)
        ).rows[0].n === 2,
      30_000,
      'both workers to listen again',
    );
    const upAt = outcomes.length;
    await until(
      () => outcomes.slice(upAt).filter((o) => o.status === 201).length >= 20,
      30_000,
      'writes to succeed again',
    );
    running = false;
    await Promise.all(loaders);
    for (const i of [a, b])
      assert.equal(i.child.exitCode, null, `${i.name} is still running:\n${i.output.slice(-2000)}`);

    const unexpected = outcomes.filter(
      (o) => o.status !== 201 && !(o.status === 503 && o.code === 'service_unavailable'),
    );
    assert.deepEqual(
      unexpected,
      [],
      'every request either succeeded or was refused with 503 service_unavailable',
    );
    const refused = outcomes.filter((o) => o.status === 503);
    const slowest = Math.max(...refused.map((o) => o.ms));
    assert.ok(slowest < 4000, `a refusal took ${Math.round(slowest)} ms`);

    // All or nothing: every gate has its audit entry, its event and its delivery, and nothing else.
    const db = t.ctx.db;
    const gates = await db
      .selectFrom('token_gates')
      .select(['id', 'name'])
      .where('org_id', '=', org.id)
      .execute();
    const ids = new Set(gates.map((g) => g.id));
    for (const o of outcomes.filter((o) => o.status === 201))
      assert.ok(ids.has(o.id as string), `201 for ${o.name} but no gate`);
    const audit = await db
      .selectFrom('audit_log')
      .select('resource_id')
      .where('org_id', '=', org.id)
      .where('action', '=', 'tokenGate.created')
      .execute();
    const events = await sql<{ id: string; gate: string }>`
      select id, data->>'gateId' as gate from events where org_id = ${org.id} and type = 'tokenGate.created'`.execute(
      db,
    );
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id'])
      .where('webhook_id', '=', webhookId)
      .execute();
    assert.deepEqual(new Set(audit.map((r) => r.resource_id)), ids, 'one audit entry per gate');
    assert.equal(audit.length, ids.size);
    assert.deepEqual(new Set(events.rows.map((r) => r.gate)), ids, 'one event per gate');
    assert.equal(events.rows.length, ids.size);
    assert.deepEqual(
      new Set(deliveries.map((d) => d.event_id)),
      new Set(events.rows.map((e) => e.id)),
      'one delivery per event',
    );
    assert.equal(deliveries.length, ids.size);

    // No delivery lost.
    await until(() => deliveries.every((d) => rx!.delivered().has(d.id)), 60_000, 'every delivery to arrive');
    tc.diagnostic(
      `${outcomes.length} requests: ${ids.size} gates created, ${refused.length} refused with 503 ` +
        `(slowest ${Math.round(slowest)} ms); ${deliveries.length} deliveries all received, ` +
        `${rx.answered.length - rx.delivered().size} twice`,
    );
  });
});
