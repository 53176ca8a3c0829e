import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countPlan, insertAuditEntry } from '../../src/events/audit-log.queries.js';
import { newId } from '../../src/lib/ids.js';
import { pruneAuditLog } from '../../src/modules/orgs/audit-log.service.js';
import { consoleToken, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { buildOrgsTestApp } from './helpers.js';

const HOUR = 3600;
const DAY = 24 * HOUR;
const ACTIONS = ['app.created', 'app.updated', 'brand.deleted', 'member.added'];
const TYPES = ['app', 'brand', 'member'];

interface Entry {
  org: string;
  action: string;
  actor: string | null;
  type: string;
  resource: string;
  ts: number;
}

/**
 * `total` comes from per-day counts of closed days plus a live count of the rest (issue 23): it must
 * stay exact across days, with every filter, after pruning and when the org goes.
 */
describe('audit log totals from per-day counts', () => {
  let t: TestApp;
  let owner: TestUser;
  let org: TestOrg;
  let neighbour: TestOrg;
  const entries: Entry[] = [];
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };

  before(async () => {
    t = await buildOrgsTestApp();
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    neighbour = await seedOrg(t, owner);
  });
  after(() => t.close());

  /** `n` entries written as the app writes them (timestamp = now), the clock moving on between them. */
  async function write(n: number, stepSeconds: number) {
    for (let i = 0; i < n; i++) {
      const e: Entry = {
        org: rnd(5) === 0 ? neighbour.id : org.id,
        action: ACTIONS[rnd(ACTIONS.length)],
        actor: rnd(6) === 0 ? null : `usr_actor_${rnd(3)}`,
        type: TYPES[rnd(TYPES.length)],
        resource: `res_${rnd(4)}`,
        ts: t.clock.nowMs(),
      };
      await insertAuditEntry(t.ctx.db, {
        id: newId('log_'),
        org_id: e.org,
        actor_user_id: e.actor,
        action: e.action,
        resource_type: e.type,
        resource_id: e.resource,
        metadata: null,
        timestamp: new Date(e.ts),
      });
      entries.push(e);
      t.clock.advance(stepSeconds);
    }
  }

  /** Every filter's total (limit 1, so it is counted) against the entries written. */
  async function assertTotals(label: string) {
    const auth = { authorization: `Bearer ${await consoleToken(t, owner.id)}` };
    const now = t.clock.nowMs();
    const midnight = now - (now % (DAY * 1000));
    const hourStart = now - (now % (HOUR * 1000));
    const iso = (ms: number) => new Date(ms).toISOString();
    const ranges: Array<[string, (ts: number) => boolean]> = [
      ['', () => true],
      [`&since=${iso(now - 2.5 * DAY * 1000)}`, (ts) => ts >= now - 2.5 * DAY * 1000],
      [`&until=${iso(now - 1.3 * DAY * 1000)}`, (ts) => ts < now - 1.3 * DAY * 1000],
      [
        `&since=${iso(midnight - 3 * DAY * 1000)}&until=${iso(midnight - DAY * 1000)}`,
        (ts) => ts >= midnight - 3 * DAY * 1000 && ts < midnight - DAY * 1000,
      ],
      [
        `&since=${iso(now - 4.2 * DAY * 1000)}&until=${iso(now - 0.4 * DAY * 1000)}`,
        (ts) => ts >= now - 4.2 * DAY * 1000 && ts < now - 0.4 * DAY * 1000,
      ],
      [
        `&since=${iso(now - 0.2 * DAY * 1000)}&until=${iso(now - 0.1 * DAY * 1000)}`,
        (ts) => ts >= now - 0.2 * DAY * 1000 && ts < now - 0.1 * DAY * 1000,
      ],
      // Whole hours: inside the grace, just before it, and across a midnight.
      [`&since=${iso(hourStart - HOUR * 1000)}`, (ts) => ts >= hourStart - HOUR * 1000],
      [
        `&since=${iso(hourStart - 5 * HOUR * 1000)}&until=${iso(hourStart - 2 * HOUR * 1000)}`,
        (ts) => ts >= hourStart - 5 * HOUR * 1000 && ts < hourStart - 2 * HOUR * 1000,
      ],
      [
        `&since=${iso(midnight - 3 * HOUR * 1000)}&until=${iso(midnight + 2 * HOUR * 1000)}`,
        (ts) => ts >= midnight - 3 * HOUR * 1000 && ts < midnight + 2 * HOUR * 1000,
      ],
      [`&until=${iso(hourStart - 2 * HOUR * 1000 + 1)}`, (ts) => ts < hourStart - 2 * HOUR * 1000 + 1],
      [`&since=${iso(now - 1.5 * HOUR * 1000)}`, (ts) => ts >= now - 1.5 * HOUR * 1000],
    ];
    const filters: Array<[string, (e: Entry) => boolean]> = [
      ['', () => true],
      ['&action=app.updated', (e) => e.action === 'app.updated'],
      ['&actorUserId=usr_actor_1', (e) => e.actor === 'usr_actor_1'],
      ['&resourceType=brand', (e) => e.type === 'brand'],
      ['&resourceId=res_2', (e) => e.resource === 'res_2'],
      [
        '&action=member.added&actorUserId=usr_actor_0',
        (e) => e.action === 'member.added' && e.actor === 'usr_actor_0',
      ],
      ['&action=never.written', () => false],
    ];
    for (const [range, inRange] of ranges) {
      for (const [filter, matches] of filters) {
        const qs = `?limit=1${filter}${range}`;
        const res = await t.app.inject({
          url: `/identity/organizations/${org.slug}/audit-log${qs}`,
          headers: auth,
        });
        assert.equal(res.statusCode, 200, res.body);
        const expected = entries.filter(
          (e) => e.org === org.id && matches(e) && (range === '' || inRange(e.ts)),
        );
        assert.equal(json(res).total, expected.length, `${label}: ${qs}`);
      }
    }
  }

  const dailyRows = (orgId: string) =>
    t.ctx.db.selectFrom('audit_log_daily').selectAll().where('org_id', '=', orgId).execute();

  it('is exact with every filter while days close, counting closed days once', async () => {
    await assertTotals('empty log');
    for (let day = 0; day < 6; day++) {
      await write(25, 50 * 60);
      await assertTotals(`day ${day}`);
    }
    const rows = await dailyRows(org.id);
    assert.ok(rows.length > 0, 'closed days are counted in audit_log_daily');
    const rolled = await t.ctx.db
      .selectFrom('audit_log_rollups')
      .selectAll()
      .where('org_id', '=', org.id)
      .executeTakeFirstOrThrow();
    assert.equal(rolled.rolled_until.getTime() % (DAY * 1000), 0, 'counted up to a UTC midnight');
    assert.ok(rolled.rolled_until.getTime() <= t.clock.nowMs() - HOUR * 1000);
    const all = rows.filter((r) => r.dim === 'all').reduce((s, r) => s + Number(r.n), 0);
    const before = entries.filter((e) => e.org === org.id && e.ts < rolled.rolled_until.getTime()).length;
    assert.equal(all, before);
  });

  it('counts closed hours once: entries on hour boundaries, the clock on the grace boundary', async () => {
    // Align the clock to an hour, then write an entry every 30 minutes (on :00 and :30), checking
    // totals with the clock exactly at each hour's end + grace, just before and just after.
    t.clock.advance((HOUR * 1000 - (t.clock.nowMs() % (HOUR * 1000))) / 1000);
    for (let h = 0; h < 5; h++) {
      await write(2, 30 * 60);
      await assertTotals(`aligned hour ${h}`);
      t.clock.advance(-1);
      await write(1, 1);
      await assertTotals(`last second of hour ${h}`);
    }
    const rolled = await t.ctx.db
      .selectFrom('audit_log_rollups')
      .selectAll()
      .where('org_id', '=', org.id)
      .executeTakeFirstOrThrow();
    const hoursUntil = rolled.hours_until?.getTime() ?? 0;
    assert.equal(hoursUntil % (HOUR * 1000), 0, 'hours counted up to the start of an hour');
    assert.ok(hoursUntil <= t.clock.nowMs() - HOUR * 1000 && hoursUntil > t.clock.nowMs() - 2 * HOUR * 1000);
    const hours = await t.ctx.db
      .selectFrom('audit_log_hourly')
      .selectAll()
      .where('org_id', '=', org.id)
      .where('dim', '=', 'all')
      .execute();
    const counted = hours.reduce((sum, r) => sum + Number(r.n), 0);
    assert.equal(counted, entries.filter((e) => e.org === org.id && e.ts < hoursUntil).length);
  });

  it('plans a count as whole days, whole hours and at most two partial hours + the uncounted ones', () => {
    const H = HOUR * 1000;
    const D = DAY * 1000;
    const days = 100 * D;
    const hours = days + 13 * H;
    const cases: Array<[number, number]> = [
      [-Infinity, Infinity],
      [days - 1.5 * D + 0.25 * H, Infinity],
      [days - 5 * D, days - 2 * D],
      [days - 4.2 * D, days - 0.4 * D],
      [days + 2 * H, days + 3 * H],
      [days + 2.5 * H, days + 2.7 * H],
      [days + 12.5 * H, days + 20 * H],
      [-Infinity, days - 3.3 * D],
      [days + 20 * H, days + 21 * H],
    ];
    for (const [since, until] of cases) {
      const plan = countPlan(since, until, days, hours);
      assert.equal(plan[0]?.lo, since, `${since}..${until} starts at since`);
      assert.equal(plan.at(-1)?.hi, until, `${since}..${until} ends at until`);
      for (let i = 1; i < plan.length; i++) assert.equal(plan[i].lo, plan[i - 1].hi, 'contiguous');
      for (const p of plan) {
        assert.ok(p.lo < p.hi);
        // Counted pieces: whole days (hours), from the start of the log when since is open.
        const whole = (ms: number, unit: number) => ms === -Infinity || ms % unit === 0;
        if (p.from === 'daily') assert.ok(whole(p.lo, D) && whole(p.hi, D) && p.hi <= days);
        if (p.from === 'hourly') assert.ok(whole(p.lo, H) && whole(p.hi, H) && p.hi <= hours);
        // Live: a partial hour at an edge, or what is not counted yet (from `hours` on).
        if (p.from === 'live')
          assert.ok(Math.min(p.hi, hours) - p.lo < H, `${since}..${until}: ${p.lo}..${p.hi}`);
      }
      assert.ok(plan.filter((p) => p.from === 'daily').length <= 1);
    }
  });

  it('stays exact after pruning (retention cutting a day in two) and new entries', async () => {
    // Identity tier: 30 days. The cutoff lands 2.5 days after the first entry, inside a counted day.
    const first = entries[0].ts;
    t.clock.advance((first + (30 + 2.5) * DAY * 1000 - t.clock.nowMs()) / 1000);
    await assertTotals('before pruning');
    const deleted = await pruneAuditLog(t.ctx);
    const cutoff = t.clock.nowMs() - 30 * DAY * 1000;
    const gone = entries.filter((e) => e.ts < cutoff);
    assert.ok(deleted >= gone.length && gone.length > 0, `${deleted} / ${gone.length}`);
    entries.splice(0, entries.length, ...entries.filter((e) => e.ts >= cutoff));
    await assertTotals('after pruning');
    assert.ok(
      (await dailyRows(org.id)).every((r) => Number(r.n) > 0),
      'no zero counts are kept',
    );
    const rolled = await t.ctx.db
      .selectFrom('audit_log_rollups')
      .selectAll()
      .where('org_id', '=', org.id)
      .executeTakeFirstOrThrow();
    const hours = await t.ctx.db
      .selectFrom('audit_log_hourly')
      .selectAll()
      .where('org_id', '=', org.id)
      .execute();
    assert.ok(
      hours.every((r) => Number(r.n) > 0),
      'no zero hour counts are kept',
    );
    const hoursUntil = rolled.hours_until?.getTime() ?? 0;
    for (const [dim, value, matches] of [
      ['all', '', () => true],
      ['action', 'app.updated', (e: Entry) => e.action === 'app.updated'],
      ['actor', 'usr_actor_2', (e: Entry) => e.actor === 'usr_actor_2'],
      ['type', 'member', (e: Entry) => e.type === 'member'],
    ] as const) {
      const counted = hours
        .filter((r) => r.dim === dim && r.value === value)
        .reduce((sum, r) => sum + Number(r.n), 0);
      const expected = entries.filter((e) => e.org === org.id && e.ts < hoursUntil && matches(e)).length;
      assert.equal(counted, expected, `hour counts of ${dim} ${value} after pruning`);
    }
    await write(30, 40 * 60);
    await assertTotals('after new entries');
  });

  it("goes with the org's row (orgs are soft-deleted; a hard delete cascades)", async () => {
    assert.ok((await dailyRows(neighbour.id)).length === 0, 'a neighbour nobody read has no counts yet');
    await t.ctx.db.deleteFrom('member_roles').where('org_id', '=', org.id).execute();
    await t.ctx.db.deleteFrom('orgs').where('id', '=', org.id).execute();
    assert.deepEqual(await dailyRows(org.id), []);
    const rollups = await t.ctx.db
      .selectFrom('audit_log_rollups')
      .selectAll()
      .where('org_id', '=', org.id)
      .execute();
    assert.deepEqual(rollups, []);
  });
});
