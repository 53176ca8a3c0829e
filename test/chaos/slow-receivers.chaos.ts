import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { defaults } from '../../src/config/defaults.js';
import { ManualClock } from '../../src/lib/clock.js';
import { DeliveryClient } from '../../src/modules/webhooks/delivery.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, json, type TestApp } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import { fireEvent, selfSignedCert } from '../webhooks/receiver.js';
import { ChaosReceiver, runEnv, storesOrSkip, until } from './cluster.js';

/**
 * A receiver slower than the response timeout and one that never answers: each attempt ends at the
 * timeout as `failed_timeout` (a retry is scheduled), and meanwhile the worker keeps delivering to
 * a healthy receiver. The timeout is injected (1.5 s instead of 10 s) so the test runs in seconds;
 * the default is checked to be the interface's 10 s.
 */
describe('chaos: slow and silent webhook receivers', { timeout: 120_000 }, () => {
  let t: TestApp | undefined;
  let rx: ChaosReceiver | undefined;
  let healthy: ChaosReceiver | undefined;
  after(async () => {
    await t?.close();
    await rx?.close();
    await healthy?.close();
  });

  it('times attempts out and keeps delivering to the others', async (tc) => {
    if (!storesOrSkip(tc)) return;
    assert.equal(new DeliveryClient({ allowPrivateNetworks: false }).timeoutMs, 10_000);
    assert.equal(defaults.webhookTimeout, 10);

    const TIMEOUT_MS = 1500;
    const EVENTS = 40;
    // The healthy receiver is another host (port): the delivery client keeps at most 64 sockets per
    // host, so deliveries to the host that hangs wait for its timeouts, not those to other hosts.
    rx = await ChaosReceiver.start();
    rx.decide = (_attempt, path) =>
      path === '/never' ? { status: 200, delayMs: 600_000 } : { status: 200, delayMs: TIMEOUT_MS * 2 };
    healthy = await ChaosReceiver.start();
    const app = await buildTestApp({ env: runEnv(), clock: new ManualClock() });
    t = app;
    const worker = webhookWorker(app.ctx);
    await worker.stop();
    worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });
    const owner = await createUser(t);
    const org = await seedOrg(t, owner);
    const hooks: Record<string, string> = {};
    for (const path of ['/never', '/slow', '/fast']) {
      const target: ChaosReceiver = path === '/fast' ? healthy : rx;
      const res = await app.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/webhooks`,
        headers: owner.auth,
        payload: { url: target.url(path), events: ['*'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      hooks[path] = json(res).id;
    }
    for (let i = 0; i < EVENTS; i++)
      await fireEvent(t, org, owner, 'member.added', { user: `usr_${i}`, roles: ['Member'] });

    const started = Date.now();
    await worker.start();
    // Every healthy delivery arrives while the others are still waiting for their timeout.
    await until(
      () => healthy!.answered.length >= EVENTS,
      TIMEOUT_MS,
      'the healthy receiver to get every delivery',
    ).catch((e) => {
      throw new Error(
        `${(e as Error).message}: answered ${healthy!.answered.length}, open ${rx!.open}, seen ${rx!.seen.size}`,
      );
    });
    const fastDone = Date.now() - started;
    assert.ok(rx.open > 0, 'slow and silent attempts are still waiting');

    const failed = async () =>
      (
        await t!.ctx.db
          .selectFrom('webhook_deliveries')
          .select(['webhook_id', 'status', 'attempt_count', 'next_attempt_at', 'response_code'])
          .where('webhook_id', 'in', [hooks['/never'], hooks['/slow']])
          .where('attempt_count', '=', 1)
          .where('locked_until', 'is', null)
          .execute()
      ).filter((r) => r.status === 'pending' && r.next_attempt_at && r.response_code === null);
    await until(
      async () => (await failed()).length === 2 * EVENTS,
      TIMEOUT_MS * 4,
      'every slow attempt to time out',
    );
    const elapsed = Date.now() - started;
    await worker.stop();

    const latency = (await t.ctx.metrics.webhookLatency.get()).values;
    const of = (suffix: string) =>
      latency.find(
        (v) =>
          v.metricName === `gatehouse_webhook_delivery_duration_seconds_${suffix}` &&
          v.labels.outcome === 'failed_timeout',
      )?.value ?? 0;
    const mean = (of('sum') / of('count')) * 1000;
    assert.equal(of('count'), 2 * EVENTS);
    assert.ok(
      mean >= TIMEOUT_MS - 50 && mean < TIMEOUT_MS + 1000,
      `a timed-out attempt lasted ${Math.round(mean)} ms on average`,
    );
    const fast = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('webhook_id', '=', hooks['/fast'])
      .execute();
    assert.ok(fast.every((r) => r.status === 'succeeded'));
    tc.diagnostic(
      `${EVENTS} deliveries to each receiver: the healthy one had all in ${fastDone} ms; ` +
        `${2 * EVENTS} slow/silent attempts timed out after ${Math.round(mean)} ms on average (all done at ${elapsed} ms)`,
    );
  });
});
