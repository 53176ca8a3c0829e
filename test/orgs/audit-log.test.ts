import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { sql } from 'kysely';
import { defaults } from '../../src/config/defaults.js';
import { newId } from '../../src/lib/ids.js';
import { pruneAuditLog, startAuditPruning } from '../../src/modules/orgs/audit-log.service.js';
import { createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { assertError, assertFieldError, buildOrgsTestApp } from './helpers.js';

const DAY = 24 * 3600;

describe('audit log', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let reader: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;
  /** The seeded entries, newest first, as the API should show them. */
  let seeded: Array<{
    id: string;
    action: string;
    actor: string | null;
    type: string;
    resource: string;
    ts: Date;
    metadata: Record<string, unknown> | null;
  }>;

  async function insert(orgId: string, e: (typeof seeded)[number]) {
    await t.ctx.db
      .insertInto('audit_log')
      .values({
        id: e.id,
        org_id: orgId,
        actor_user_id: e.actor,
        action: e.action,
        resource_type: e.type,
        resource_id: e.resource,
        metadata: e.metadata ? JSON.stringify(e.metadata) : null,
        timestamp: e.ts,
      })
      .execute();
  }

  before(async () => {
    // The app's own pruning job runs on real timers a minute after it starts; on a loaded machine this
    // suite outlasts that minute, and the job would prune the old entries the tests below plant (the
    // timer test saw its entry gone "before the first minute"). Postpone it past the suite.
    const tunable = defaults as { auditPruneFirstRunDelay: number };
    const firstRun = tunable.auditPruneFirstRunDelay;
    tunable.auditPruneFirstRunDelay = 20 * DAY;
    try {
      t = await buildOrgsTestApp();
    } finally {
      tunable.auditPruneFirstRunDelay = firstRun;
    }
    owner = await createUser(t);
    member = await createUser(t);
    reader = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    otherOrg = await seedOrg(t, outsider);
    await addMember(t, org, member, 'member');
    const readOnly = newId('role_');
    const now = t.clock.now();
    await t.ctx.db
      .insertInto('roles')
      .values({
        id: readOnly,
        org_id: org.id,
        name: 'Reader',
        description: null,
        built_in: null,
        permissions: ['org.read', 'org.brands.view'],
        created_at: now,
        updated_at: now,
      })
      .execute();
    await addMember(t, org, reader, readOnly);

    // 30 entries one minute apart, ending an hour before now: three actions, two actors and a system
    // actor, two resource types.
    const start = t.clock.nowMs() - 3600_000 - 30 * 60_000;
    seeded = [];
    for (let i = 0; i < 30; i++) {
      seeded.push({
        id: `log_${String(i).padStart(20, '0')}`,
        action: ['app.created', 'app.updated', 'brand.deleted'][i % 3],
        actor: [owner.id, member.id, null][i % 3 === 2 ? 2 : i % 2],
        type: i % 3 === 2 ? 'brand' : 'app',
        resource: `res_${i % 5}`,
        ts: new Date(start + i * 60_000),
        metadata: i % 4 === 0 ? { n: i } : null,
      });
    }
    for (const e of seeded) await insert(org.id, e);
    await insert(otherOrg.id, { ...seeded[0], id: 'log_foreign' });
    seeded.reverse();
  });
  after(() => t.close());

  const get = (user: TestUser, qs = '', o = org) =>
    t.app.inject({ url: `/identity/organizations/${o.slug}/audit-log${qs}`, headers: user.auth });
  const ids = (res: { body: string }) => json(res).items.map((e: { id: string }) => e.id);
  const onlyOurs = (list: typeof seeded) => list.map((e) => e.id);

  it('returns the newest 50 by default, with the entry shape of the interface', async () => {
    const res = await get(member);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    // The org's own entries written by seedOrg are none (fixtures insert directly), so 30 in all.
    assert.equal(body.total, 30);
    assert.deepEqual(ids(res), onlyOurs(seeded));
    const withMeta = body.items.find((e: { id: string }) => e.id === seeded.at(-1)!.id);
    assert.deepEqual(withMeta, {
      id: seeded.at(-1)!.id,
      org: org.id,
      actorUserId: owner.id,
      action: 'app.created',
      resourceType: 'app',
      resourceId: 'res_0',
      metadata: { n: 0 },
      timestamp: seeded.at(-1)!.ts.toISOString(),
    });
    const system = body.items.find((e: { actorUserId: string | null }) => e.actorUserId === null);
    assert.ok(system);
    const noMeta = body.items.find((e: { id: string }) => e.id === seeded.find((s) => !s.metadata)!.id);
    assert.equal('metadata' in noMeta, false);
    assert.ok(!res.body.includes('log_foreign'));
  });

  it('filters by action, actor, resource type and resource id, total counting every match', async () => {
    const cases: Array<[string, (e: (typeof seeded)[number]) => boolean]> = [
      ['action=app.updated', (e) => e.action === 'app.updated'],
      [`actorUserId=${member.id}`, (e) => e.actor === member.id],
      ['resourceType=brand', (e) => e.type === 'brand'],
      ['resourceId=res_3', (e) => e.resource === 'res_3'],
      ['resourceType=app&resourceId=res_1', (e) => e.type === 'app' && e.resource === 'res_1'],
      [
        `action=app.created&actorUserId=${owner.id}`,
        (e) => e.action === 'app.created' && e.actor === owner.id,
      ],
      ['action=nothing.matches', () => false],
    ];
    for (const [qs, pred] of cases) {
      const expected = seeded.filter(pred);
      const res = await get(member, `?${qs}&limit=2`);
      assert.equal(res.statusCode, 200, `${qs}: ${res.body}`);
      assert.equal(json(res).total, expected.length, qs);
      assert.deepEqual(ids(res), onlyOurs(expected.slice(0, 2)), qs);
    }
  });

  it('treats since as inclusive and until as exclusive', async () => {
    const since = seeded[20].ts.toISOString();
    const until = seeded[10].ts.toISOString();
    const res = await get(member, `?since=${since}&until=${until}&limit=200`);
    assert.deepEqual(ids(res), onlyOurs(seeded.slice(11, 21)));
    assert.equal(json(res).total, 10);
  });

  it('pages with limit and offset; total is independent of the page', async () => {
    const first = await get(member, '?limit=7');
    const second = await get(member, '?limit=7&offset=7');
    const last = await get(member, '?limit=7&offset=28');
    assert.deepEqual(ids(first), onlyOurs(seeded.slice(0, 7)));
    assert.deepEqual(ids(second), onlyOurs(seeded.slice(7, 14)));
    assert.deepEqual(ids(last), onlyOurs(seeded.slice(28)));
    for (const r of [first, second, last]) assert.equal(json(r).total, 30);
    const beyond = json(await get(member, '?offset=100'));
    assert.deepEqual(beyond, { items: [], total: 30 });
  });

  it('refuses out-of-range limits and malformed filters with 400 (never clamped)', async () => {
    assertFieldError(await get(member, '?limit=0'), 'limit', 'out_of_range');
    assertFieldError(await get(member, '?limit=201'), 'limit', 'out_of_range');
    assertFieldError(await get(member, '?limit=1.5'), 'limit', 'invalid_type');
    assertFieldError(await get(member, '?offset=-1'), 'offset', 'out_of_range');
    assertFieldError(await get(member, '?since=yesterday'), 'since', 'invalid_format');
    assertFieldError(await get(member, '?until=2026-13-01T00:00:00Z'), 'until', 'invalid_format');
    assertFieldError(await get(member, '?action='), 'action', 'too_short');
    assert.equal((await get(member, '?limit=200')).statusCode, 200);
    assert.equal((await get(member, '?limit=1')).statusCode, 200);
  });

  it('needs org.members.view (403 with details.missing); outsiders get 404', async () => {
    const res = await get(reader);
    assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.members.view']);
    assertError(await get(outsider), 404, 'not_found');
    assertError(
      await t.app.inject({ url: `/identity/organizations/${org.slug}/audit-log` }),
      401,
      'unauthorized',
    );
    // The other org's owner sees only their own entry.
    const theirs = json(await get(outsider, '', otherOrg));
    assert.deepEqual(
      theirs.items.map((e: { id: string }) => e.id),
      ['log_foreign'],
    );
  });

  it('shows the entries that mutations write through the API', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/identity/organizations/${org.slug}`,
      headers: owner.auth,
      payload: { name: 'Audited' },
    });
    assert.equal(res.statusCode, 200);
    const log = json(await get(member, '?action=org.updated'));
    assert.equal(log.total, 1);
    assert.equal(log.items[0].actorUserId, owner.id);
    assert.equal(log.items[0].resourceType, 'org');
    assert.equal(log.items[0].resourceId, org.id);
    assert.match(log.items[0].id, /^log_/);
  });

  describe('pruning', () => {
    it("deletes entries older than the org tier's retention, and only those", async () => {
      const tiers = ['identity', 'brand', 'federation', 'authority', 'custom-unknown'] as const;
      const orgs: Record<string, string> = {};
      for (const tier of tiers) {
        const o = await seedOrg(t, owner);
        await t.ctx.db.updateTable('orgs').set({ tier }).where('id', '=', o.id).execute();
        orgs[tier] = o.id;
      }
      const now = t.clock.nowMs();
      const ages = [0, 29, 30, 31, 89, 90, 91, 364, 365, 366, 1000];
      for (const tier of tiers) {
        for (const age of ages) {
          await t.ctx.db
            .insertInto('audit_log')
            .values({
              id: `log_${tier}_${age}`,
              org_id: orgs[tier],
              actor_user_id: null,
              action: 'test.entry',
              resource_type: 'test',
              resource_id: String(age),
              metadata: null,
              timestamp: new Date(now - age * DAY * 1000),
            })
            .execute();
        }
      }
      const remaining = async (tier: string) =>
        (
          await t.ctx.db
            .selectFrom('audit_log')
            .select('resource_id')
            .where('org_id', '=', orgs[tier])
            .execute()
        )
          .map((r) => Number(r.resource_id))
          .sort((a, b) => a - b);

      await pruneAuditLog(t.ctx);
      // An entry exactly at the retention age is kept; one second older goes.
      assert.deepEqual(await remaining('identity'), [0, 29, 30]);
      assert.deepEqual(await remaining('brand'), [0, 29, 30, 31, 89, 90]);
      assert.deepEqual(await remaining('federation'), [0, 29, 30, 31, 89, 90, 91, 364, 365]);
      assert.deepEqual(await remaining('authority'), ages);
      assert.deepEqual(await remaining('custom-unknown'), ages);
      assert.equal(defaults.auditRetentionDays.identity, 30);

      // A day later the 30-day entry of the identity tier has aged out too.
      t.clock.advance(DAY);
      try {
        await pruneAuditLog(t.ctx);
      } finally {
        t.clock.advance(-DAY);
      }
      assert.deepEqual(await remaining('identity'), [0, 29]);
      assert.deepEqual(await remaining('brand'), [0, 29, 30, 31, 89]);
    });

    it('prunes in batches until nothing old is left', async () => {
      const o = await seedOrg(t, owner);
      const old = new Date(t.clock.nowMs() - 40 * DAY * 1000);
      await sql`insert into audit_log (id, org_id, actor_user_id, action, resource_type, resource_id, "timestamp")
        select 'log_bulk_' || g, ${o.id}, null, 'bulk', 'test', g::text, ${old}::timestamptz
        from generate_series(1, 12001) g`.execute(t.ctx.db);
      const deleted = await pruneAuditLog(t.ctx);
      assert.ok(deleted >= 12001, String(deleted));
      const left = await t.ctx.db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', o.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 0);
    });

    it('runs a minute after start and then daily, until the app closes', async () => {
      const o = await seedOrg(t, owner);
      const oldEntry = async (id: string) =>
        t.ctx.db
          .insertInto('audit_log')
          .values({
            id,
            org_id: o.id,
            actor_user_id: null,
            action: 'old',
            resource_type: 'test',
            resource_id: id,
            metadata: null,
            timestamp: new Date(t.clock.nowMs() - 31 * DAY * 1000),
          })
          .execute();
      const exists = async (id: string) =>
        !!(await t.ctx.db.selectFrom('audit_log').select('id').where('id', '=', id).executeTakeFirst());
      const settle = async (id: string, present: boolean) => {
        for (let i = 0; i < 5000 && (await exists(id)) !== present; i++)
          await new Promise((r) => setImmediate(r));
        return exists(id);
      };

      mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      const hooks = t.ctx.hooks.onClose.length;
      try {
        const pruning = startAuditPruning(t.ctx, { error: () => {} });
        assert.equal(t.ctx.hooks.onClose.length, hooks + 1);
        await oldEntry('log_timer_1');
        mock.timers.tick(59_000);
        assert.equal(await settle('log_timer_1', false), true, 'not before the first minute');
        mock.timers.tick(1_000);
        assert.equal(await settle('log_timer_1', false), false, 'pruned a minute after start');
        // The first run may still be finishing (deleting is not the end of it): a run in flight makes
        // the next tick a no-op, so wait for it before stepping to the daily run.
        await pruning.idle();

        await oldEntry('log_timer_2');
        mock.timers.tick(DAY * 1000 - 60_000);
        assert.equal(await settle('log_timer_2', false), false, 'pruned by the daily run');

        // The stop function registered for close clears both timers.
        await t.ctx.hooks.onClose.pop()!();
        await oldEntry('log_timer_3');
        mock.timers.tick(2 * DAY * 1000);
        assert.equal(await settle('log_timer_3', false), true, 'no run after close');
      } finally {
        mock.timers.reset();
        t.ctx.hooks.onClose.length = Math.min(t.ctx.hooks.onClose.length, hooks);
      }
    });
  });
});
