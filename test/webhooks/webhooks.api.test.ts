import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type CompiledQuery,
  type DatabaseConnection,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import { defaults } from '../../src/config/defaults.js';
import type { Database } from '../../src/db/schema.js';
import { deleteOrg } from '../../src/modules/orgs/orgs.service.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { forgetInterest, webhookInterest } from '../../src/modules/webhooks/webhooks.service.js';
import { buildTestApp, createUser, grantSystem, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { fireEvent } from './receiver.js';

describe('webhooks API', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let other: TestOrg;
  let base: string;

  before(async () => {
    // Limits are tested below with the real budgets; here they must not get in the way.
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    await webhookWorker(t.ctx).stop();
    owner = await createUser(t);
    member = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    other = await seedOrg(t, outsider);
    await addMember(t, org, member, 'member');
    base = `/identity/organizations/${org.slug}/webhooks`;
  });
  after(() => t.close());

  let n = 0;
  const create = (body: Record<string, unknown>, user = owner, path = base) =>
    t.app.inject({ method: 'POST', url: path, headers: user.auth, payload: body });
  const uniqueUrl = () => `https://hooks.example.com/h/${++n}`;

  it('creates a webhook and returns its secret once', async () => {
    const res = await create({ url: uniqueUrl(), events: ['member.added', 'consent.granted'] });
    assert.equal(res.statusCode, 201);
    const w = json(res);
    assert.match(w.id, /^wh_[A-Za-z0-9]{20}$/);
    assert.match(w.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(w.secret.slice(6), 'base64').length, 32);
    assert.deepEqual(w.events, ['consent.granted', 'member.added']);
    assert.equal(w.enabled, true);
    assert.equal(w.consecutiveFailures, 0);
    assert.equal(w.lastDeliveredAt, undefined);
    assert.equal(w.disabledAt, undefined);
    assert.equal(w.createdAt, t.clock.now().toISOString());

    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', w.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret_enc.includes(w.secret.slice(6)), 'the secret is stored sealed');
    assert.equal(t.ctx.encryptor.decrypt(row.secret_enc, `webhook:${w.id}`), w.secret);

    const got = json(await t.app.inject({ url: `${base}/${w.id}`, headers: owner.auth }));
    assert.equal(got.secret, undefined);
    const { secret: _secret, ...publicFields } = w;
    assert.deepEqual(got, publicFields);

    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .selectAll()
      .where('resource_id', '=', w.id)
      .executeTakeFirstOrThrow();
    assert.equal(audit.action, 'webhook.created');
    assert.equal(audit.resource_type, 'webhook');
    assert.ok(!JSON.stringify(audit.metadata).includes('whsec_'));
  });

  it('accepts ["*"] and "*" with explicitly named high-volume events', async () => {
    assert.equal((await create({ url: uniqueUrl(), events: ['*'] })).statusCode, 201);
    const res = await create({ url: uniqueUrl(), events: ['token.issued', '*'] });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(json(res).events, ['*', 'token.issued']);
  });

  it('refuses a non-HTTPS URL with validation_failed', async () => {
    for (const url of [
      'http://hooks.example.com/x',
      'ftp://hooks.example.com/',
      'not a url',
      'https://u:p@hooks.example.com/',
    ]) {
      const res = await create({ url, events: ['*'] });
      assert.equal(res.statusCode, 400, url);
      assert.equal(json(res).error.code, 'validation_failed');
      assert.equal(json(res).error.details.fields[0].field, 'url');
    }
  });

  it('refuses unknown or empty event lists with validation_failed', async () => {
    for (const events of [['member.joined'], [], ['*', 'nope'], 'member.added']) {
      const res = await create({ url: uniqueUrl(), events });
      assert.equal(res.statusCode, 400, JSON.stringify(events));
      assert.equal(json(res).error.code, 'validation_failed');
    }
    const missing = await create({ url: uniqueUrl() });
    assert.equal(missing.statusCode, 400);
  });

  it('refuses a duplicate (url, events) subscription whatever the order of events', async () => {
    const url = uniqueUrl();
    assert.equal((await create({ url, events: ['member.added', 'member.removed'] })).statusCode, 201);
    const dup = await create({ url, events: ['member.removed', 'member.added', 'member.added'] });
    assert.equal(dup.statusCode, 409);
    assert.equal(json(dup).error.code, 'conflict');
    // Same URL with other events, or the same pair in another org, is fine.
    assert.equal((await create({ url, events: ['member.added'] })).statusCode, 201);
    const elsewhere = await create(
      { url, events: ['member.added', 'member.removed'] },
      outsider,
      `/identity/organizations/${other.slug}/webhooks`,
    );
    assert.equal(elsewhere.statusCode, 201);
  });

  it('lists webhooks without secrets', async () => {
    const res = await t.app.inject({ url: base, headers: member.auth });
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.equal(body.total, body.items.length);
    assert.ok(body.total >= 3);
    assert.ok(!res.body.includes('whsec_'));
    for (const w of body.items) assert.equal(w.secret, undefined);
  });

  it('requires org.webhooks.edit for writes (403 with details.missing) and view for reads', async () => {
    const res = await create({ url: uniqueUrl(), events: ['*'] }, member);
    assert.equal(res.statusCode, 403);
    assert.equal(json(res).error.code, 'forbidden');
    assert.deepEqual(json(res).error.details.missing, ['org.webhooks.edit']);

    const noView = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/roles`,
      headers: owner.auth,
      payload: { name: 'nothing', permissions: [] },
    });
    // A custom role without webhook permissions (inserted directly if the roles route is absent).
    let roleId: string;
    if (noView.statusCode === 201) roleId = json(noView).id;
    else {
      roleId = `role_${n}`;
      await t.ctx.db
        .insertInto('roles')
        .values({
          id: roleId,
          org_id: org.id,
          name: 'nothing',
          description: null,
          built_in: null,
          permissions: [],
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })
        .execute();
    }
    const plain = await createUser(t);
    await addMember(t, org, plain, roleId);
    const list = await t.app.inject({ url: base, headers: plain.auth });
    assert.equal(list.statusCode, 403);
    assert.deepEqual(json(list).error.details.missing, ['org.webhooks.view']);
  });

  it('answers 401 without a token and 404 to non-members', async () => {
    assert.equal((await t.app.inject({ url: base })).statusCode, 401);
    const res = await t.app.inject({ url: base, headers: outsider.auth });
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).error.code, 'not_found');
  });

  it("answers 404 for another org's webhook on every route", async () => {
    const theirs = json(
      await create(
        { url: uniqueUrl(), events: ['*'] },
        outsider,
        `/identity/organizations/${other.slug}/webhooks`,
      ),
    );
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `${base}/${theirs.id}`],
      ['PATCH', `${base}/${theirs.id}`, { enabled: false }],
      ['DELETE', `${base}/${theirs.id}`],
      ['POST', `${base}/${theirs.id}/rotate-secret`],
      ['POST', `${base}/${theirs.id}/test`],
      ['GET', `${base}/${theirs.id}/deliveries`],
      ['POST', `${base}/${theirs.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`],
    ];
    for (const [method, url, payload] of routes) {
      const res = await t.app.inject({
        method: method as 'GET',
        url,
        headers: owner.auth,
        payload: payload as object,
      });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.equal(json(res).error.code, 'not_found');
    }
    const still = await t.app.inject({
      url: `/identity/organizations/${other.slug}/webhooks/${theirs.id}`,
      headers: outsider.auth,
    });
    assert.equal(json(still).enabled, true);
  });

  it('PATCH updates url, events and enabled and returns the whole webhook', async () => {
    const w = json(await create({ url: uniqueUrl(), events: ['member.added'] }));
    t.clock.advance(5);
    const url = uniqueUrl();
    const res = await t.app.inject({
      method: 'PATCH',
      url: `${base}/${w.id}`,
      headers: owner.auth,
      payload: { url, events: ['tokenGate.created', 'member.added'], enabled: false },
    });
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.equal(body.url, url);
    assert.deepEqual(body.events, ['member.added', 'tokenGate.created']);
    assert.equal(body.enabled, false);
    assert.equal(body.disabledAt, undefined, 'disabledAt marks an auto-disable only');
    assert.equal(body.updatedAt, t.clock.now().toISOString());
    assert.equal(body.secret, undefined);

    const bad = await t.app.inject({
      method: 'PATCH',
      url: `${base}/${w.id}`,
      headers: owner.auth,
      payload: { url: 'http://insecure.example.com' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).error.code, 'validation_failed');
    const badEvents = await t.app.inject({
      method: 'PATCH',
      url: `${base}/${w.id}`,
      headers: owner.auth,
      payload: { events: ['bogus'] },
    });
    assert.equal(badEvents.statusCode, 400);
    const unknownField = await t.app.inject({
      method: 'PATCH',
      url: `${base}/${w.id}`,
      headers: owner.auth,
      payload: { secret: 'whsec_x' },
    });
    assert.equal(unknownField.statusCode, 400);
  });

  it('PATCH into an existing (url, events) pair is a conflict', async () => {
    const url = uniqueUrl();
    await create({ url, events: ['member.added'] });
    const b = json(await create({ url, events: ['member.removed'] }));
    const res = await t.app.inject({
      method: 'PATCH',
      url: `${base}/${b.id}`,
      headers: owner.auth,
      payload: { events: ['member.added'] },
    });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).error.code, 'conflict');
  });

  it('DELETE answers 204 and the webhook is gone', async () => {
    const w = json(await create({ url: uniqueUrl(), events: ['*'] }));
    const res = await t.app.inject({ method: 'DELETE', url: `${base}/${w.id}`, headers: owner.auth });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal((await t.app.inject({ url: `${base}/${w.id}`, headers: owner.auth })).statusCode, 404);
    const again = await t.app.inject({ method: 'DELETE', url: `${base}/${w.id}`, headers: owner.auth });
    assert.equal(again.statusCode, 404);
  });

  it('an org holds at most webhooksPerOrgMax webhooks: then 422 naming the limit; deleting one makes room', async () => {
    const boss = await createUser(t);
    const full = await seedOrg(t, boss);
    const url = `/identity/organizations/${full.slug}/webhooks`;
    const first = json(await create({ url: uniqueUrl(), events: ['*'] }, boss, url));
    // The rest written directly (the creation rate limit would take minutes); the count is the org's.
    const now = new Date();
    const rows = Array.from({ length: defaults.webhooksPerOrgMax - 1 }, (_, i) => ({
      id: `wh_cap_${full.id}_${i}`,
      org_id: full.id,
      url: `https://hooks.example.com/cap/${i}`,
      events: ['*'],
      events_key: '*',
      secret_enc: 'x',
      enabled: true,
      consecutive_failures: 0,
      last_delivered_at: null,
      disabled_at: null,
      created_at: now,
      updated_at: now,
    }));
    await t.ctx.db.insertInto('webhooks').values(rows).execute();
    const refused = await create({ url: uniqueUrl(), events: ['member.added'] }, boss, url);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(json(refused).error.code, 'unprocessable_entity');
    assert.equal(json(refused).error.details.limit, defaults.webhooksPerOrgMax);
    // Another org is not affected.
    assert.equal((await create({ url: uniqueUrl(), events: ['*'] })).statusCode, 201);
    const gone = await t.app.inject({ method: 'DELETE', url: `${url}/${first.id}`, headers: boss.auth });
    assert.equal(gone.statusCode, 204);
    assert.equal((await create({ url: uniqueUrl(), events: ['member.added'] }, boss, url)).statusCode, 201);
  });

  it('rotate-secret returns a new secret, never shown again', async () => {
    const w = json(await create({ url: uniqueUrl(), events: ['*'] }));
    const res = await t.app.inject({
      method: 'POST',
      url: `${base}/${w.id}/rotate-secret`,
      headers: owner.auth,
    });
    assert.equal(res.statusCode, 200);
    const { secret } = json(res);
    assert.match(secret, /^whsec_/);
    assert.notEqual(secret, w.secret);
    assert.deepEqual(Object.keys(json(res)), ['secret']);
    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', w.id)
      .executeTakeFirstOrThrow();
    assert.equal(t.ctx.encryptor.decrypt(row.secret_enc, `webhook:${w.id}`), secret);
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .select('action')
      .where('resource_id', '=', w.id)
      .where('action', '=', 'webhook.secret.rotated')
      .execute();
    assert.equal(audit.length, 1);
  });

  it('validates the deliveries query (limit 1–200, dates, status)', async () => {
    const w = json(await create({ url: uniqueUrl(), events: ['*'] }));
    for (const qs of ['limit=0', 'limit=201', 'offset=-1', 'since=yesterday', 'status=bogus', 'limit=abc']) {
      const res = await t.app.inject({ url: `${base}/${w.id}/deliveries?${qs}`, headers: owner.auth });
      assert.equal(res.statusCode, 400, qs);
      assert.equal(json(res).error.code, 'validation_failed');
    }
    const ok = await t.app.inject({ url: `${base}/${w.id}/deliveries?limit=200`, headers: member.auth });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(json(ok), { items: [], total: 0 });
  });

  it('replay of an unknown delivery is 404, and needs edit permission', async () => {
    const w = json(await create({ url: uniqueUrl(), events: ['*'] }));
    const res = await t.app.inject({
      method: 'POST',
      url: `${base}/${w.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`,
      headers: owner.auth,
    });
    assert.equal(res.statusCode, 404);
    const forbidden = await t.app.inject({
      method: 'POST',
      url: `${base}/${w.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`,
      headers: member.auth,
    });
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(json(forbidden).error.details.missing, ['org.webhooks.edit']);
  });

  it('queues deliveries only for enabled, subscribed webhooks of the org', async () => {
    const o = await seedOrg(t, owner);
    const p = `/identity/organizations/${o.slug}/webhooks`;
    const all = json(await create({ url: uniqueUrl(), events: ['*'] }, owner, p));
    const tokens = json(await create({ url: uniqueUrl(), events: ['token.issued'] }, owner, p));
    const members = json(await create({ url: uniqueUrl(), events: ['member.added'] }, owner, p));
    const off = json(await create({ url: uniqueUrl(), events: ['*'] }, owner, p));
    await t.app.inject({
      method: 'PATCH',
      url: `${p}/${off.id}`,
      headers: owner.auth,
      payload: { enabled: false },
    });

    await fireEvent(t, o, owner, 'member.added', { user: member.id, roles: ['Member'] });
    await fireEvent(t, o, null, 'token.issued', {
      user: member.id,
      app: 'x',
      scopes: ['openid'],
      grant: 'refresh_token',
    });
    await fireEvent(t, org, owner, 'member.added', { user: member.id, roles: ['Member'] });

    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['webhook_id', 'event'])
      .where('org_id', '=', o.id)
      .execute();
    const byHook = (id: string) =>
      rows
        .filter((r) => r.webhook_id === id)
        .map((r) => r.event)
        .sort();
    assert.deepEqual(byHook(all.id), ['member.added'], '* excludes token.issued');
    assert.deepEqual(byHook(tokens.id), ['token.issued']);
    assert.deepEqual(byHook(members.id), ['member.added']);
    assert.deepEqual(byHook(off.id), []);
  });

  it('a rolled-back change queues nothing', async () => {
    const o = await seedOrg(t, owner);
    const hook = json(
      await create({ url: uniqueUrl(), events: ['*'] }, owner, `/identity/organizations/${o.slug}/webhooks`),
    );
    await assert.rejects(
      t.ctx.db.transaction().execute(async (trx) => {
        const { recordMutation } = await import('../../src/events/outbox.js');
        await recordMutation(trx, t.clock, {
          orgId: o.id,
          actorUserId: owner.id,
          action: 'x',
          resourceType: 'x',
          resourceId: 'x',
          events: [{ type: 'member.added', data: { user: 'u', roles: [] } }],
        });
        throw new Error('abort');
      }),
    );
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook.id)
      .execute();
    assert.equal(rows.length, 0);
  });

  it('deleting the org disables its webhooks, and nothing more is queued', async () => {
    const o = await seedOrg(t, owner);
    const hook = json(
      await create({ url: uniqueUrl(), events: ['*'] }, owner, `/identity/organizations/${o.slug}/webhooks`),
    );
    const row = await t.ctx.db
      .selectFrom('orgs')
      .selectAll()
      .where('id', '=', o.id)
      .executeTakeFirstOrThrow();
    await deleteOrg(t.ctx, row, owner.id);
    const w = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    assert.equal(w.enabled, false);
    await fireEvent(t, o, owner, 'member.removed', { user: member.id, removedRoles: [] });
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook.id)
      .execute();
    assert.equal(rows.length, 0);
  });

  it('the admin mirror needs admin.orgs.edit / admin.orgs.view', async () => {
    const admin = await createUser(t);
    const mirror = `/admin/identity/organizations/${org.slug}/webhooks`;
    const denied = await t.app.inject({ url: mirror, headers: admin.auth });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(json(denied).error.details.missing, ['admin.orgs.view']);
    await grantSystem(t, admin.id, ['admin.orgs.view']);
    assert.equal((await t.app.inject({ url: mirror, headers: admin.auth })).statusCode, 200);
    const write = await t.app.inject({
      method: 'POST',
      url: mirror,
      headers: admin.auth,
      payload: { url: uniqueUrl(), events: ['*'] },
    });
    assert.equal(write.statusCode, 403);
    assert.deepEqual(json(write).error.details.missing, ['admin.orgs.edit']);
  });

  it('a subscription read racing a webhook write is not cached past the write', async () => {
    const o = await seedOrg(t, owner);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let read!: () => void;
    const readDone = new Promise<void>((resolve) => {
      read = resolve;
    });
    // The read runs before the write commits; its rows come back after the write's invalidation
    // (the read's connection is free meanwhile, as on a pool).
    const slow = throughDb(t, async (pass) => {
      const result = await pass();
      read();
      await held;
      return result;
    });
    const pending = webhookInterest(slow, o.id, 'token.issued');
    await readDone;
    const made = await create(
      { url: uniqueUrl(), events: ['token.issued'] },
      owner,
      `/identity/organizations/${o.slug}/webhooks`,
    );
    assert.equal(made.statusCode, 201, made.body);
    release();
    assert.equal(await pending, false, 'the racing read saw no subscription');
    assert.equal(await webhookInterest(t.ctx.db, o.id, 'token.issued'), true, 'the next read is fresh');
  });

  it('a stale subscription entry is refreshed by one read that concurrent callers share', async () => {
    const o = await seedOrg(t, owner);
    let reads = 0;
    let release!: () => void;
    let held = Promise.resolve();
    const hold = () => {
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
    };
    let fail = false;
    const counted = throughDb(t, async (pass) => {
      reads++;
      await held;
      if (fail) throw new Error('connection reset');
      return pass();
    });
    const first = await create(
      { url: uniqueUrl(), events: ['token.issued'] },
      owner,
      `/identity/organizations/${o.slug}/webhooks`,
    );
    assert.equal(first.statusCode, 201, first.body);
    hold();
    const many = Array.from({ length: 20 }, () => webhookInterest(counted, o.id, 'token.issued'));
    await new Promise((r) => setImmediate(r));
    assert.equal(reads, 1, 'twenty callers, one read');
    // A webhook write during the read: a caller after it does not join the read begun before it.
    const made = await create(
      { url: uniqueUrl(), events: ['member.added'] },
      owner,
      `/identity/organizations/${o.slug}/webhooks`,
    );
    assert.equal(made.statusCode, 201, made.body);
    const later = webhookInterest(counted, o.id, 'member.added');
    await new Promise((r) => setImmediate(r));
    assert.equal(reads, 2, 'the caller after the write reads again');
    release();
    assert.deepEqual(await Promise.all(many), Array(20).fill(true));
    assert.equal(await later, true, 'the later read saw the new subscription');
    // A failed read fails the callers that shared it, and is not kept: the next caller reads again.
    forgetInterest(o.id);
    fail = true;
    hold();
    const failing = [
      webhookInterest(counted, o.id, 'token.issued'),
      webhookInterest(counted, o.id, 'token.issued'),
    ];
    release();
    for (const r of await Promise.allSettled(failing)) assert.equal(r.status, 'rejected');
    assert.equal(reads, 3);
    fail = false;
    assert.equal(await webhookInterest(counted, o.id, 'token.issued'), true);
    assert.equal(reads, 4);
    // Reads inside a caller's transaction are never shared.
    forgetInterest(o.id);
    hold();
    const pooled = webhookInterest(counted, o.id, 'token.issued');
    await counted.transaction().execute(async (trx) => {
      release();
      assert.equal(await webhookInterest(trx, o.id, 'token.issued'), true);
    });
    assert.equal(await pooled, true);
    assert.equal(reads, 6, 'the transaction read its own');
  });
});

/**
 * A Kysely whose every statement goes through `run`, which decides when (and whether) to send it to
 * the test app's database with `pass`; the connection is free between statements, as on a pool.
 */
function throughDb(
  t: TestApp,
  run: (pass: () => Promise<QueryResult<unknown>>) => Promise<QueryResult<unknown>>,
) {
  class ThroughDriver extends DummyDriver {
    override async acquireConnection(): Promise<DatabaseConnection> {
      return {
        executeQuery: async <R>(query: CompiledQuery) =>
          (await run(() => t.ctx.db.executeQuery(query))) as QueryResult<R>,
        streamQuery: () => {
          throw new Error('not streamed');
        },
      };
    }
  }
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new ThroughDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

describe('webhooks API rate limits', () => {
  let t: TestApp;
  let owner: TestUser;
  let org: TestOrg;
  before(async () => {
    t = await buildTestApp();
    await webhookWorker(t.ctx).stop();
    owner = await createUser(t);
    org = await seedOrg(t, owner);
  });
  after(() => t.close());

  it('allows 10 creations per minute per org, then 429 with Retry-After', async () => {
    const base = `/identity/organizations/${org.slug}/webhooks`;
    for (let i = 0; i < 10; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: base,
        headers: owner.auth,
        payload: { url: `https://rl.example.com/${i}`, events: ['*'] },
      });
      assert.equal(res.statusCode, 201);
    }
    const res = await t.app.inject({
      method: 'POST',
      url: base,
      headers: owner.auth,
      payload: { url: 'https://rl.example.com/x', events: ['*'] },
    });
    assert.equal(res.statusCode, 429);
    assert.equal(json(res).error.code, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(res.headers['ratelimit-limit'], '10');
  });

  it('allows 5 rotations per minute per webhook', async () => {
    const o = await seedOrg(t, owner);
    const base = `/identity/organizations/${o.slug}/webhooks`;
    const a = json(
      await t.app.inject({
        method: 'POST',
        url: base,
        headers: owner.auth,
        payload: { url: 'https://rl.example.com/a', events: ['*'] },
      }),
    );
    const b = json(
      await t.app.inject({
        method: 'POST',
        url: base,
        headers: owner.auth,
        payload: { url: 'https://rl.example.com/b', events: ['*'] },
      }),
    );
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: `${base}/${a.id}/rotate-secret`,
        headers: owner.auth,
      });
      assert.equal(res.statusCode, 200);
    }
    const res = await t.app.inject({
      method: 'POST',
      url: `${base}/${a.id}/rotate-secret`,
      headers: owner.auth,
    });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['ratelimit-limit'], '5');
    const otherHook = await t.app.inject({
      method: 'POST',
      url: `${base}/${b.id}/rotate-secret`,
      headers: owner.auth,
    });
    assert.equal(otherHook.statusCode, 200, 'the budget is per webhook');
  });

  it('allows 60 delivery-log reads per minute per webhook', async () => {
    const o = await seedOrg(t, owner);
    const base = `/identity/organizations/${o.slug}/webhooks`;
    const a = json(
      await t.app.inject({
        method: 'POST',
        url: base,
        headers: owner.auth,
        payload: { url: 'https://rl.example.com/d', events: ['*'] },
      }),
    );
    let last = 0;
    let limited = 0;
    for (let i = 0; i < 61; i++) {
      const res = await t.app.inject({ url: `${base}/${a.id}/deliveries`, headers: owner.auth });
      last = res.statusCode;
      if (res.statusCode === 429) limited++;
    }
    // orgRead (60/min/org) and webhookDeliveriesRead (60/min/webhook) both allow exactly 60.
    assert.equal(last, 429);
    assert.equal(limited, 1);
  });
});
