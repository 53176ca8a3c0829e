import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordMutation } from '../../src/events/outbox.js';
import { csvCell, csvRow } from '../../src/lib/csv.js';
import { newId } from '../../src/lib/ids.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from '../token-gates/fake-rpc.js';
import { Receiver, selfSignedCert } from '../webhooks/receiver.js';

/**
 * The routes the console added beside the interface's: a mint's decimals, the webhook event
 * catalog, one delivery in full, and the audit log export.
 */
describe('routes added for the console', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let receiver: Receiver;
  let owner: TestUser;
  let member: TestUser;
  let nobody: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    receiver = await Receiver.start();
    t = await buildTestApp({
      env: { SOLANA_RPC_URL: rpc.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MULTIPLIER: '100' },
    });
    const worker = webhookWorker(t.ctx);
    await worker.stop();
    worker.configureClient({ ca: selfSignedCert().cert });
    owner = await createUser(t);
    member = await createUser(t);
    nobody = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    other = await seedOrg(t, outsider);
    await addMember(t, org, member, 'member');
    const roleId = newId('role_');
    await t.ctx.db
      .insertInto('roles')
      .values({
        id: roleId,
        org_id: org.id,
        name: 'Readers of nothing',
        description: null,
        built_in: null,
        permissions: ['org.read'],
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();
    await addMember(t, org, nobody, roleId);
  });
  after(async () => {
    await t.close();
    await receiver.close();
    await rpc.stop();
  });

  const get = (url: string, user: TestUser | null = owner) =>
    t.app.inject({ url, headers: user ? user.auth : {} });

  describe('GET …/token-gates/mint-info', () => {
    const url = (slug: string, mint: string) =>
      `/identity/organizations/${slug}/token-gates/mint-info?mintAddress=${encodeURIComponent(mint)}`;

    it("answers a mint's program and decimals, and caches them", async () => {
      const mint = rpc.addMint('spl-token-2022', 9);
      rpc.resetCalls();
      const res = await get(url(org.slug, mint), member);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), {
        mintAddress: mint,
        found: true,
        program: 'spl-token-2022',
        decimals: 9,
        supply: '1000000000000',
      });
      await get(url(org.slug, mint), member);
      assert.equal(rpc.totalCalls, 1, 'the second lookup is served from the cache');
    });

    it('answers found: false for an address without a mint, and looks again after a minute', async () => {
      const wallet = rpc.addWallet();
      rpc.resetCalls();
      assert.deepEqual(json(await get(url(org.slug, wallet))), { mintAddress: wallet, found: false });
      await get(url(org.slug, wallet));
      assert.equal(rpc.totalCalls, 1);
      t.clock.advance(61);
      await get(url(org.slug, wallet));
      assert.equal(rpc.totalCalls, 2);
    });

    it('refuses an address that is not base58 of 32 bytes (422 at the field)', async () => {
      for (const bad of ['0OIl', '1111']) {
        const res = await get(url(org.slug, bad));
        assert.equal(res.statusCode, 422);
        assert.equal(json(res).error.details.fields[0].field, 'mintAddress');
      }
      assert.equal((await get(`/identity/organizations/${org.slug}/token-gates/mint-info`)).statusCode, 400);
    });

    it('502 when the node fails', async () => {
      rpc.mode = 'http500';
      try {
        const res = await get(url(org.slug, randomAddress()));
        assert.equal(res.statusCode, 502);
      } finally {
        rpc.mode = 'ok';
      }
    });

    it('needs org.tokenGates.view; another org is 404; no token is 401', async () => {
      const mint = rpc.addMint();
      const denied = await get(url(org.slug, mint), nobody);
      assert.equal(denied.statusCode, 403);
      assert.deepEqual(json(denied).error.details.missing, ['org.tokenGates.view']);
      assert.equal((await get(url(other.slug, mint))).statusCode, 404);
      assert.equal((await get(url(org.slug, mint), null)).statusCode, 401);
    });
  });

  describe('GET …/webhooks/event-types', () => {
    it('lists the catalog; token.* are outside the wildcard', async () => {
      const res = await get(`/identity/organizations/${org.slug}/webhooks/event-types`, member);
      assert.equal(res.statusCode, 200);
      const items = json(res).items as { type: string; description: string; inWildcard: boolean }[];
      assert.ok(items.length >= 18);
      const byType = new Map(items.map((i) => [i.type, i]));
      assert.equal(byType.get('member.added')?.inWildcard, true);
      assert.equal(byType.get('token.issued')?.inWildcard, false);
      assert.equal(byType.get('token.refreshed')?.inWildcard, false);
      assert.ok(items.every((i) => i.description.length > 0));
    });

    it('needs org.webhooks.view; another org is 404', async () => {
      const denied = await get(`/identity/organizations/${org.slug}/webhooks/event-types`, nobody);
      assert.equal(denied.statusCode, 403);
      assert.deepEqual(json(denied).error.details.missing, ['org.webhooks.view']);
      assert.equal((await get(`/identity/organizations/${other.slug}/webhooks/event-types`)).statusCode, 404);
    });
  });

  describe('GET …/webhooks/:id/deliveries/:deliveryId', () => {
    let hook: string;
    let delivery: string;

    before(async () => {
      receiver.reply = () => ({ status: 200, body: 'thanks' });
      const created = await t.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/webhooks`,
        headers: owner.auth,
        payload: { url: receiver.url('/detail'), events: ['*'] },
      });
      assert.equal(created.statusCode, 201, created.body);
      hook = json(created).id;
      const test = await t.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/webhooks/${hook}/test`,
        headers: owner.auth,
      });
      delivery = json(test).delivery.id;
    });

    it('shows the payload, the request headers as sent and the response excerpt', async () => {
      const res = await get(
        `/identity/organizations/${org.slug}/webhooks/${hook}/deliveries/${delivery}`,
        member,
      );
      assert.equal(res.statusCode, 200, res.body);
      const d = json(res);
      assert.equal(d.status, 'succeeded');
      assert.equal(d.responseBodyExcerpt, 'thanks');
      assert.equal(d.payload.id, delivery);
      assert.equal(d.payload.type, 'webhook.test');
      assert.deepEqual(d.payload.data, { test: true });
      const sent = receiver.on('/detail')[0].headers;
      for (const [k, v] of Object.entries(d.requestHeaders)) assert.equal(sent[k], v, k);
      assert.deepEqual([...d.attemptHeaders].sort(), [
        'service-signature',
        'service-timestamp',
        'webhook-signature',
        'webhook-timestamp',
      ]);
      assert.equal(d.replayOf, undefined);
    });

    it('names the original of a replay', async () => {
      const replay = await t.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/webhooks/${hook}/deliveries/${delivery}/replay`,
        headers: owner.auth,
      });
      const id = json(replay).id;
      const d = json(await get(`/identity/organizations/${org.slug}/webhooks/${hook}/deliveries/${id}`));
      assert.equal(d.replayOf, delivery);
      assert.equal(d.payload.id, id);
    });

    it('404 for an unknown delivery or webhook, or another org; 403 without org.webhooks.view', async () => {
      const base = `/identity/organizations/${org.slug}/webhooks`;
      assert.equal((await get(`${base}/${hook}/deliveries/nope`)).statusCode, 404);
      assert.equal((await get(`${base}/wh_nope/deliveries/${delivery}`)).statusCode, 404);
      assert.equal(
        (await get(`/identity/organizations/${other.slug}/webhooks/${hook}/deliveries/${delivery}`, outsider))
          .statusCode,
        404,
      );
      const denied = await get(`${base}/${hook}/deliveries/${delivery}`, nobody);
      assert.equal(denied.statusCode, 403);
    });
  });

  describe('GET …/audit-log/export', () => {
    const url = (q: string, slug = org.slug) => `/identity/organizations/${slug}/audit-log/export?${q}`;

    before(async () => {
      // More entries than one export batch, with a formula-looking resource id among them.
      await t.ctx.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 1205; i++) {
          t.clock.advance(1);
          await recordMutation(trx, t.clock, {
            orgId: org.id,
            actorUserId: owner.id,
            action: i % 2 ? 'export.odd' : 'export.even',
            resourceType: 'thing',
            resourceId: i === 7 ? '=HYPERLINK("http://x")' : `thing_${i}`,
            metadata: { i, note: 'a, "quoted"\nline' },
          });
        }
      });
    });

    it('streams every matching entry as JSON, newest first, across batches', async () => {
      const res = await get(url('format=json&action=export.even'), member);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.match(String(res.headers['content-disposition']), /attachment; filename="audit-log-.*\.json"/);
      const items = JSON.parse(res.body) as { action: string; metadata: { i: number } }[];
      assert.equal(items.length, 603);
      assert.ok(items.every((e) => e.action === 'export.even'));
      const is = items.map((e) => e.metadata.i);
      assert.deepEqual(
        is,
        [...is].sort((a, b) => b - a),
      );
      assert.equal(new Set(is).size, is.length, 'no entry twice across batches');
      // The same entries as the paged list.
      const page = json(
        await get(`/identity/organizations/${org.slug}/audit-log?action=export.even&limit=5`),
      );
      assert.equal(page.total, 603);
      assert.deepEqual(items.slice(0, 5), page.items);
    });

    it('CSV: a header, one line per entry, formula-safe and quoted cells', async () => {
      const since = new Date(t.clock.nowMs() - 10_000).toISOString();
      const res = await get(url(`format=csv&resourceType=thing&since=${encodeURIComponent(since)}`));
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      const lines = res.body.split('\r\n');
      assert.equal(lines[0], 'id,timestamp,actorUserId,action,resourceType,resourceId,metadata');
      assert.equal(lines.at(-1), '');
      // One entry a second: `since` 10 s ago (inclusive) matches the newest eleven. Each metadata
      // has a line break inside its quotes, so entries are counted by their line starts.
      assert.equal(res.body.match(/\r\nlog_/g)?.length, 11);

      const all = await get(url('format=csv&resourceType=thing'));
      assert.match(all.body, /,"'=HYPERLINK\(""http:\/\/x""\)",/);
    });

    it('refuses a bad format or date; needs org.members.view; another org is 404', async () => {
      assert.equal((await get(url('format=xml'))).statusCode, 400);
      assert.equal((await get(url('format=csv&since=yesterday'))).statusCode, 400);
      const denied = await get(url('format=csv'), nobody);
      assert.equal(denied.statusCode, 403);
      assert.deepEqual(json(denied).error.details.missing, ['org.members.view']);
      assert.equal((await get(url('format=csv', other.slug))).statusCode, 404);
    });
  });

  it('csvCell neutralises formulas and quotes what needs it', () => {
    assert.equal(csvCell('plain'), 'plain');
    assert.equal(csvCell('=1+1'), "'=1+1");
    assert.equal(csvCell('+1'), "'+1");
    assert.equal(csvCell('-1'), "'-1");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\tx'), "'\tx");
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('=a,b'), `"'=a,b"`);
    assert.equal(csvCell(null), '');
    assert.equal(csvRow(['a', 'b']), 'a,b\r\n');
  });
});
