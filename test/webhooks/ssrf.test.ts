import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeliveryClient, metadataAddress } from '../../src/modules/webhooks/delivery.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import type { WebhookWorker } from '../../src/modules/webhooks/worker.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { fireEvent, Receiver, selfSignedCert } from './receiver.js';

describe('webhook delivery refuses private networks (WEBHOOK_ALLOW_PRIVATE_NETWORKS off)', () => {
  let t: TestApp;
  let worker: WebhookWorker;
  let rx: Receiver;
  let rx6: Receiver | undefined;
  let owner: TestUser;
  let org: TestOrg;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    assert.equal(t.ctx.config.webhookAllowPrivateNetworks, false);
    worker = webhookWorker(t.ctx);
    await worker.stop();
    // The receiver's certificate is trusted, so only the address check can stop these requests.
    worker.configureClient({ ca: selfSignedCert().cert, timeoutMs: 3000 });
    rx = await Receiver.start();
    rx6 = await Receiver.start('::1').catch(() => undefined);
    owner = await createUser(t);
    org = await seedOrg(t, owner);
  });
  after(async () => {
    await t.close();
    await rx.close();
    await rx6?.close();
  });

  it('refuses loopback, private, link-local, CGNAT, metadata and IPv4-mapped addresses as failed_network', async () => {
    const urls = [
      rx.url('/v4'),
      `https://localhost:${rx.port}/by-name`, // refused after DNS resolution
      `https://[::ffff:127.0.0.1]:${rx.port}/mapped`,
      `https://[::ffff:7f00:1]:${rx.port}/mapped-hex`,
      rx6 ? `https://[::1]:${rx6.port}/v6` : 'https://[::1]/v6',
      'https://10.0.0.1/private',
      'https://192.168.1.1/private',
      'https://172.16.0.1/private',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/cgnat',
      'https://0.0.0.0/unspecified',
      'https://[fd00::1]/ula',
      'https://[fe80::1]/link-local',
    ];
    const hooks: Array<{ id: string; url: string }> = [];
    for (const url of urls) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/webhooks`,
        headers: owner.auth,
        payload: { url, events: ['member.added'] },
      });
      assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
      hooks.push(json(res));
    }
    await fireEvent(t, org, owner, 'member.added', { user: 'u', roles: [] });
    const started = Date.now();
    assert.equal(await worker.runOnce(), urls.length);
    assert.ok(Date.now() - started < 2500, 'refused before connecting, not timed out');

    for (const h of hooks) {
      const log = json(
        await t.app.inject({
          url: `/identity/organizations/${org.slug}/webhooks/${h.id}/deliveries`,
          headers: owner.auth,
        }),
      );
      const [d] = log.items;
      assert.equal(d.attemptCount, 1, h.url);
      assert.equal(d.status, 'pending', `${h.url} is retried like any network failure`);
      assert.equal(d.responseCode, undefined, h.url);
    }
    assert.equal(rx.received.length, 0, 'nothing reached the IPv4 loopback receiver');
    assert.equal(rx6?.received.length ?? 0, 0, 'nothing reached the IPv6 loopback receiver');

    // After the last retry the failure status is failed_network.
    for (const delay of [1, 4, 16, 64, 256]) {
      t.clock.advance(delay);
      await worker.runOnce();
    }
    const statuses = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count'])
      .where('org_id', '=', org.id)
      .execute();
    assert.equal(statuses.length, urls.length);
    for (const s of statuses) {
      assert.equal(s.status, 'failed_network');
      assert.equal(s.attempt_count, 6);
    }
    assert.equal(rx.received.length, 0);
  });

  it('the test route reports the refusal inline', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks`,
      headers: owner.auth,
      payload: { url: 'https://169.254.169.254/test-route', events: ['*'] },
    });
    const h = json(res);
    const test = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/webhooks/${h.id}/test`,
      headers: owner.auth,
    });
    assert.equal(test.statusCode, 200);
    const { delivery } = json(test);
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.attemptCount, 1);
    assert.equal(delivery.responseCode, undefined);
    assert.ok(delivery.nextAttemptAt);
  });
});

describe('metadata addresses stay refused under WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  it('names link-local and every cloud metadata service, in any IPv6 spelling, and nothing else', () => {
    for (const a of [
      '169.254.169.254',
      '169.254.170.2',
      '169.254.0.23',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      'fe80::1',
      'fd00:ec2::254',
      'fd00:ec2::23',
      'fd20:ce::254',
      'fd00:42::42',
      '100.100.100.200',
      '192.0.0.192',
      '168.63.129.16',
    ])
      assert.equal(metadataAddress(a), true, a);
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '192.168.1.1',
      '100.64.0.1',
      'fd00::1',
      '8.8.8.8',
      'localhost',
    ])
      assert.equal(metadataAddress(a), false, a);
  });

  describe('the delivery client refuses them before connecting, by address and after DNS', () => {
    let rx: Receiver;
    const send = (c: DeliveryClient, url: string) =>
      c.send(url, { 'content-type': 'application/json' }, '{}');
    // Loopback stands in for a metadata address here, so a refusal that failed would only reach the
    // local receiver, never the network.
    const client = (refuseAlways: (a: string) => boolean) =>
      new DeliveryClient({
        allowPrivateNetworks: true,
        ca: selfSignedCert().cert,
        timeoutMs: 3000,
        refuseAlways,
      });
    before(async () => {
      rx = await Receiver.start();
    });
    after(() => rx.close());

    for (const [what, url] of [
      ['an address in the URL', () => rx.url('/ip')],
      ['a name that resolves to one', () => `https://localhost:${rx.port}/name`],
    ] as const) {
      it(what, async () => {
        const open = client(() => false);
        const shut = client((a) => a === '127.0.0.1');
        try {
          assert.equal((await send(open, url())).status, 'succeeded', 'allowed without the refusal');
          const seen = rx.received.length;
          assert.deepEqual(await send(shut, url()), {
            status: 'failed_network',
            responseCode: null,
            responseBodyExcerpt: null,
          });
          assert.equal(rx.received.length, seen, 'nothing reached the receiver');
        } finally {
          open.close();
          shut.close();
        }
      });
    }
  });
});
