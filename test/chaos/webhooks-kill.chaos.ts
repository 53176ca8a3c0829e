import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, json, type TestApp } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import { fireEvent } from '../webhooks/receiver.js';
import { ChaosReceiver, Instance, runEnv, storesOrSkip, until } from './cluster.js';

/**
 * kill -9 of an instance with deliveries in flight and retries scheduled: every delivery still
 * arrives (at least once; the receiver dedupes by Service-Delivery), none is lost, and the other
 * instance takes the retries over. An attempt in flight on the dead instance stays leased until its
 * lease ends (response timeout + 30 s), then the survivor sends it again.
 */
describe('chaos: an instance killed with webhook deliveries pending', { timeout: 240_000 }, () => {
  const EVENTS = 30;
  let t: TestApp | undefined;
  let rx: ChaosReceiver;
  const instances: Instance[] = [];

  before(async () => {
    rx = await ChaosReceiver.start();
  });
  after(async () => {
    for (const i of instances) await i.stop().catch(() => {});
    await t?.close();
    await rx.close();
  });

  it('delivers every event after kill -9, retries resuming on the survivor', async (tc) => {
    if (!storesOrSkip(tc)) return;
    // Each retry 1 s after a failure, so the test runs in real time.
    const env = runEnv({ WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1' });
    // The test's own app (not serving) seeds the schema and fires the events; its worker stays off.
    t = await buildTestApp({ env, clock: new ManualClock() });
    await webhookWorker(t.ctx).stop();
    const owner = await createUser(t);
    const org = await seedOrg(t, owner);
    const created = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: rx.url('/kill'), events: ['*'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const webhookId = json(created).id as string;

    // First attempt of every delivery fails (a retry gets scheduled); the second hangs for 8 s
    // (under the 10 s timeout) so the instance is killed with attempts in flight; later ones succeed.
    rx.decide = (attempt) =>
      attempt === 1 ? { status: 500 } : attempt === 2 ? { status: 200, delayMs: 8000 } : { status: 200 };

    const a = await Instance.start('A', env);
    instances.push(a);
    for (let i = 0; i < EVENTS; i++)
      await fireEvent(t, org, owner, 'member.added', { user: `usr_${i}`, roles: ['Member'] });

    await until(() => rx.open >= 3, 60_000, 'A to hold second attempts in flight');
    const inFlight = rx.open;
    const scheduled = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select((e) => e.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'pending')
      .where('locked_until', 'is', null)
      .executeTakeFirstOrThrow();
    await a.crash();

    const b = await Instance.start('B', env);
    instances.push(b);
    const ids = (
      await t.ctx.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', webhookId)
        .execute()
    ).map((r) => r.id);
    assert.equal(ids.length, EVENTS);
    // Leases of the dead instance's attempts end 40 s after they were taken.
    await until(() => ids.every((id) => rx.delivered().has(id)), 120_000, 'every delivery to arrive');
    await until(
      async () =>
        (
          await t!.ctx.db
            .selectFrom('webhook_deliveries')
            .select('status')
            .where('webhook_id', '=', webhookId)
            .where('status', '!=', 'succeeded')
            .execute()
        ).length === 0,
      10_000,
      'every delivery to be recorded as succeeded',
    );
    const duplicates = rx.answered.length - rx.delivered().size;
    tc.diagnostic(
      `${EVENTS} deliveries; at the kill: ${inFlight} attempts in flight on A, ${Number(scheduled.n)} waiting; ` +
        `all delivered, ${duplicates} delivered twice (at-least-once)`,
    );
  });
});
