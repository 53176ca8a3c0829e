import { type Insertable, type Selectable, sql } from 'kysely';
import type { AuditLogTable, Executor } from '../db/schema.js';

export type AuditRow = Selectable<AuditLogTable>;

export interface AuditFilter {
  action?: string;
  actorUserId?: string;
  resourceType?: string;
  resourceId?: string;
  since?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

/** An org's entries that match the filter's exact-match fields and time range. */
function matching(db: Executor, orgId: string, f: Omit<AuditFilter, 'limit' | 'offset'>) {
  let base = db.selectFrom('audit_log').where('org_id', '=', orgId);
  if (f.action !== undefined) base = base.where('action', '=', f.action);
  if (f.actorUserId !== undefined) base = base.where('actor_user_id', '=', f.actorUserId);
  if (f.resourceType !== undefined) base = base.where('resource_type', '=', f.resourceType);
  if (f.resourceId !== undefined) base = base.where('resource_id', '=', f.resourceId);
  if (f.since !== undefined) base = base.where('timestamp', '>=', f.since);
  if (f.until !== undefined) base = base.where('timestamp', '<', f.until);
  return base;
}

/**
 * One page of an org's audit log, newest first, and the count of every match. Each exact-match
 * filter has an index that starts (org_id, <filter>) and ends with the page order (0002_orgs.sql).
 * `now` decides which days have closed (see countMatching).
 */
export async function queryAuditLog(
  db: Executor,
  orgId: string,
  f: AuditFilter,
  now: Date,
): Promise<{ rows: AuditRow[]; total: number }> {
  const rows = await matching(db, orgId, f)
    .selectAll()
    .orderBy('timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit)
    .offset(f.offset)
    .execute();
  // A short, non-empty page (or a short first page) is the end of the matches: the total is known
  // without counting them again. Only a full page, or one past the end, needs the count.
  if (rows.length < f.limit && (rows.length > 0 || f.offset === 0)) {
    return { rows, total: f.offset + rows.length };
  }
  return { rows, total: await countMatching(db, orgId, f, now) };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/**
 * An hour (a day) is counted once it ended this long ago: an entry's `timestamp` is taken just before
 * its insert, so every entry of it has committed by then (clock skew between instances included).
 */
const ROLLUP_GRACE_MS = HOUR_MS;
/**
 * Held (transaction-scoped) by a rollup and by each pruning batch, so neither misses the other. Keyed
 * by the schema too: deployments (and test runs) sharing one database in separate schemas have
 * separate counts, and one's rollup need not make another's readers count live.
 */
const DAILY_COUNTS_LOCK = sql`${sql.lit(7_417_003)}, hashtext(current_schema())`;

/** Floor and ceiling to a multiple of `unit` (UTC); infinities stay as they are. */
const floorTo = (ms: number, unit: number) => (Number.isFinite(ms) ? ms - (((ms % unit) + unit) % unit) : ms);
const ceilTo = (ms: number, unit: number) => (Number.isFinite(ms) ? floorTo(ms + unit - 1, unit) : ms);

/** The per-day counts that answer the filter, or undefined when it combines filters (counted live). */
function countKey(f: Omit<AuditFilter, 'limit' | 'offset'>): { dim: string; value: string } | undefined {
  const set = [f.action, f.actorUserId, f.resourceType, f.resourceId].filter((v) => v !== undefined);
  if (set.length === 0) return { dim: 'all', value: '' };
  if (set.length > 1 || f.resourceId !== undefined) return undefined;
  if (f.action !== undefined) return { dim: 'action', value: f.action };
  if (f.actorUserId !== undefined) return { dim: 'actor', value: f.actorUserId };
  return { dim: 'type', value: f.resourceType as string };
}

/** A piece of a time range [lo, hi) (ms, infinities for open ends) and where its count comes from. */
export interface CountPiece {
  from: 'daily' | 'hourly' | 'live';
  lo: number;
  hi: number;
}

/**
 * Splits [since, until) into the whole counted days inside it (before `days`), the whole counted
 * hours around them (before `hours`), and the rest, counted live: at most the partial hour at each
 * edge and the hours not counted yet (the current one and the grace). Pieces are contiguous, in
 * order, and cover the range exactly once.
 */
export function countPlan(since: number, until: number, days: number, hours: number): CountPiece[] {
  const pieces: CountPiece[] = [];
  const live = (lo: number, hi: number) => {
    if (lo < hi) pieces.push({ from: 'live', lo, hi });
  };
  const byHours = (lo: number, hi: number) => {
    const hLo = ceilTo(lo, HOUR_MS);
    const hHi = Math.min(hours, floorTo(hi, HOUR_MS));
    if (hLo >= hHi) return live(lo, hi);
    live(lo, hLo);
    pieces.push({ from: 'hourly', lo: hLo, hi: hHi });
    live(hHi, hi);
  };
  const dLo = ceilTo(since, DAY_MS);
  const dHi = Math.min(days, floorTo(until, DAY_MS));
  if (dLo >= dHi) {
    byHours(since, until);
  } else {
    byHours(since, dLo);
    pieces.push({ from: 'daily', lo: dLo, hi: dHi });
    byHours(dHi, until);
  }
  return pieces;
}

/**
 * The exact count of an org's entries matching the filter. With no filter or one broad filter
 * (action, actor or resource type), with a time range or none, the counted days and hours inside
 * the range come from audit_log_daily and audit_log_hourly (index ranges of at most a row per day,
 * and at most 23 rows per edge) and only the rest is counted live on the filter's index: the hours
 * not rolled up yet (the current one, and the previous one during the grace) and the partial hours
 * at since/until (countPlan). Other filters are selective: counted live.
 */
export async function countMatching(
  db: Executor,
  orgId: string,
  f: Omit<AuditFilter, 'limit' | 'offset'>,
  now: Date,
): Promise<number> {
  const key = countKey(f);
  const rolled = key ? await rolledUntil(db, orgId, now) : undefined;
  const live = (lo: number, hi: number) =>
    matching(db, orgId, {
      ...f,
      since: Number.isFinite(lo) ? new Date(lo) : undefined,
      until: Number.isFinite(hi) ? new Date(hi) : undefined,
    }).select((eb) => eb.fn.countAll<string>().as('n'));
  if (!key || rolled === undefined) {
    return Number((await live(-Infinity, Infinity).executeTakeFirstOrThrow()).n);
  }
  const counted = (table: 'audit_log_daily' | 'audit_log_hourly', lo: number, hi: number) => {
    const col = table === 'audit_log_daily' ? 'day' : 'hour';
    let q = db
      .selectFrom(table)
      .select(sql<string>`coalesce(sum(n), 0)`.as('n'))
      .where('org_id', '=', orgId)
      .where('dim', '=', key.dim)
      .where('value', '=', key.value)
      .where(col, '<', new Date(hi));
    if (Number.isFinite(lo)) q = q.where(col, '>=', new Date(lo));
    return q;
  };
  const plan = countPlan(
    f.since?.getTime() ?? -Infinity,
    f.until?.getTime() ?? Infinity,
    rolled.days,
    rolled.hours,
  );
  if (plan.length === 0) return 0;
  const res = await db
    .selectNoFrom(
      plan.map((p, i) =>
        (p.from === 'live'
          ? live(p.lo, p.hi)
          : counted(p.from === 'daily' ? 'audit_log_daily' : 'audit_log_hourly', p.lo, p.hi)
        ).as(`p${i}`),
      ),
    )
    .executeTakeFirstOrThrow();
  return Object.values(res as Record<string, string>).reduce((sum, n) => sum + Number(n), 0);
}

/**
 * Up to where (ms) the org's days and hours are counted in audit_log_daily and audit_log_hourly,
 * counting the days and hours that have closed since, once (the first reader after an hour closes
 * pays for that hour). Undefined when nothing is counted yet and another rollup or a pruning batch
 * holds the lock: count live.
 */
async function rolledUntil(
  db: Executor,
  orgId: string,
  now: Date,
): Promise<{ days: number; hours: number } | undefined> {
  const closedDay = floorTo(now.getTime() - ROLLUP_GRACE_MS, DAY_MS);
  const closedHour = floorTo(now.getTime() - ROLLUP_GRACE_MS, HOUR_MS);
  const read = async (x: Executor) => {
    const r = await x
      .selectFrom('audit_log_rollups')
      .select(['rolled_until', 'hours_until'])
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    if (!r) return undefined;
    const days = r.rolled_until.getTime();
    // Counted days, no counted hours yet (rolled before 0020): the hours are counted from scratch.
    return { days, hours: r.hours_until ? r.hours_until.getTime() : undefined };
  };
  const usable = (r: Awaited<ReturnType<typeof read>>) =>
    r && r.hours !== undefined ? { days: r.days, hours: r.hours } : undefined;
  const current = await read(db);
  if (current && current.hours !== undefined && current.hours >= closedHour) return usable(current);
  const roll = async (trx: Executor) => {
    const lock = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_xact_lock(${DAILY_COUNTS_LOCK}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return usable(current);
    const from = await read(trx);
    if (from && from.hours !== undefined && from.hours >= closedHour) return usable(from);
    const count = (table: 'audit_log_daily' | 'audit_log_hourly', lo: number | undefined, hi: number) =>
      sql`insert into ${sql.table(table)} (org_id, dim, value, ${sql.ref(table === 'audit_log_daily' ? 'day' : 'hour')}, n)
        select ${orgId}, v.dim, v.value, ${table === 'audit_log_daily' ? DAY_OF_ENTRY : HOUR_OF_ENTRY}, count(*)
        from audit_log a cross join lateral (values ${DIMS}) v(dim, value)
        where a.org_id = ${orgId} and v.value is not null and a."timestamp" < ${new Date(hi)}
          ${lo !== undefined ? sql`and a."timestamp" >= ${new Date(lo)}` : sql``}
        group by 2, 3, 4`.execute(trx);
    if (from === undefined || from.days < closedDay) await count('audit_log_daily', from?.days, closedDay);
    await count('audit_log_hourly', from?.hours, closedHour);
    const days = Math.max(from?.days ?? closedDay, closedDay);
    await trx
      .insertInto('audit_log_rollups')
      .values({ org_id: orgId, rolled_until: new Date(days), hours_until: new Date(closedHour) })
      .onConflict((oc) =>
        oc.column('org_id').doUpdateSet({ rolled_until: new Date(days), hours_until: new Date(closedHour) }),
      )
      .execute();
    return { days, hours: closedHour };
  };
  return db.isTransaction ? roll(db) : db.transaction().execute(roll);
}

/** The UTC midnight starting the day of entry `a`. */
const DAY_OF_ENTRY = sql`(date_trunc('day', a."timestamp" at time zone 'UTC') at time zone 'UTC')`;
/** The start of the hour of entry `a`. */
const HOUR_OF_ENTRY = sql`(date_trunc('hour', a."timestamp" at time zone 'UTC') at time zone 'UTC')`;
/** The counts an entry `a` adds to: all, its action, its actor (not for system entries), its type. */
const DIMS = sql`('all', ''), ('action', a.action), ('actor', a.actor_user_id), ('type', a.resource_type)`;

/**
 * Deletes up to `batch` entries older than `cutoff` in orgs of `tier`, and takes them off their days'
 * counts in the same statement. Small batches keep each statement's locks and WAL short on a large
 * log; the caller loops until a batch comes back short.
 */
export async function pruneBatch(db: Executor, tier: string, cutoff: Date, batch: number): Promise<number> {
  const run = async (trx: Executor) => {
    await sql`select pg_advisory_xact_lock(${DAILY_COUNTS_LOCK})`.execute(trx);
    const res = await sql<{ deleted: string }>`
      with gone as (
        delete from audit_log where id in (
          select a.id from audit_log a join orgs o on o.id = a.org_id
          where o.tier = ${tier} and a."timestamp" < ${cutoff}
          limit ${batch})
        returning org_id, "timestamp", action, actor_user_id, resource_type
      ), per as (
        select a.org_id, v.dim, v.value, ${DAY_OF_ENTRY} as day, count(*) as n
        from gone a cross join lateral (values ${DIMS}) v(dim, value)
        where v.value is not null
        group by 1, 2, 3, 4
      ), per_hour as (
        select a.org_id, v.dim, v.value, ${HOUR_OF_ENTRY} as hour, count(*) as n
        from gone a cross join lateral (values ${DIMS}) v(dim, value)
        where v.value is not null
        group by 1, 2, 3, 4
      ), counted as (
        update audit_log_daily d set n = d.n - per.n from per
        where d.org_id = per.org_id and d.dim = per.dim and d.value = per.value and d.day = per.day
        returning 1
      ), counted_hours as (
        update audit_log_hourly h set n = h.n - per_hour.n from per_hour
        where h.org_id = per_hour.org_id and h.dim = per_hour.dim and h.value = per_hour.value
          and h.hour = per_hour.hour
        returning 1
      )
      select (select count(*) from gone) as deleted, (select count(*) from counted) as counted,
        (select count(*) from counted_hours) as counted_hours`.execute(trx);
    return Number(res.rows[0].deleted);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** Drops the day and hour counts that pruning brought to zero (a missing one counts zero). */
export async function dropEmptyDays(db: Executor): Promise<void> {
  await db.deleteFrom('audit_log_daily').where('n', '<=', '0').execute();
  await db.deleteFrom('audit_log_hourly').where('n', '<=', '0').execute();
}

export async function insertAuditEntry(db: Executor, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/** Where an export left off: the last entry of the previous batch (the order is newest first). */
export interface AuditCursor {
  timestamp: Date;
  id: string;
}

/**
 * One batch of an export, newest first, after `cursor` (keyset, so every batch costs the same however
 * deep into the log it is, and entries written meanwhile neither repeat nor shift the rest).
 */
export async function auditBatchAfter(
  db: Executor,
  orgId: string,
  f: Omit<AuditFilter, 'limit' | 'offset'>,
  cursor: AuditCursor | undefined,
  size: number,
): Promise<AuditRow[]> {
  let base = matching(db, orgId, f);
  if (cursor)
    base = base.where((eb) =>
      eb.or([
        eb('timestamp', '<', cursor.timestamp),
        eb.and([eb('timestamp', '=', cursor.timestamp), eb('id', '<', cursor.id)]),
      ]),
    );
  return base.selectAll().orderBy('timestamp', 'desc').orderBy('id', 'desc').limit(size).execute();
}
