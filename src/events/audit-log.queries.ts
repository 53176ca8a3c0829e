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

const DAY_MS = 86_400_000;
/**
 * A day is counted once it ended this long ago: an entry's `timestamp` is taken just before its
 * insert, so every entry of a day has committed by then (clock skew between instances included).
 */
const ROLLUP_GRACE_MS = 3_600_000;
/** Held (transaction-scoped) by a rollup and by each pruning batch, so neither misses the other. */
const DAILY_COUNTS_LOCK = 7_417_003;

const floorDay = (ms: number) => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
const ceilDay = (ms: number) => floorDay(ms + DAY_MS - 1);

/** The per-day counts that answer the filter, or undefined when it combines filters (counted live). */
function dailyKey(f: Omit<AuditFilter, 'limit' | 'offset'>): { dim: string; value: string } | undefined {
  const set = [f.action, f.actorUserId, f.resourceType, f.resourceId].filter((v) => v !== undefined);
  if (set.length === 0) return { dim: 'all', value: '' };
  if (set.length > 1 || f.resourceId !== undefined) return undefined;
  if (f.action !== undefined) return { dim: 'action', value: f.action };
  if (f.actorUserId !== undefined) return { dim: 'actor', value: f.actorUserId };
  return { dim: 'type', value: f.resourceType as string };
}

/**
 * The exact count of an org's entries matching the filter. With no filter or one broad filter
 * (action, actor or resource type), with a time range or none, the closed days fully inside the range
 * come from audit_log_daily (one index range, at most a row per day) and only the rest is counted
 * live on the filter's index: the days not rolled up yet (today's, at most a day or two) and the
 * partial days at the edges of since/until. Other filters are selective: counted live.
 */
export async function countMatching(
  db: Executor,
  orgId: string,
  f: Omit<AuditFilter, 'limit' | 'offset'>,
  now: Date,
): Promise<number> {
  const key = dailyKey(f);
  const rolled = key ? await rolledUntil(db, orgId, now) : undefined;
  const lo = f.since !== undefined ? ceilDay(f.since.getTime()) : undefined;
  const hi =
    rolled === undefined ? undefined : Math.min(rolled, f.until ? floorDay(f.until.getTime()) : rolled);
  const live = (extra: Partial<AuditFilter>) =>
    matching(db, orgId, { ...f, ...extra }).select((eb) => eb.fn.countAll<string>().as('n'));
  if (!key || hi === undefined || (lo !== undefined && lo >= hi)) {
    return Number((await live({}).executeTakeFirstOrThrow()).n);
  }
  let days = db
    .selectFrom('audit_log_daily')
    .select(sql<string>`coalesce(sum(n), 0)`.as('n'))
    .where('org_id', '=', orgId)
    .where('dim', '=', key.dim)
    .where('value', '=', key.value)
    .where('day', '<', new Date(hi));
  if (lo !== undefined) days = days.where('day', '>=', new Date(lo));
  // Before the first whole day (when since falls inside a day), and from the end of the counted days.
  const head =
    lo !== undefined && f.since && lo > f.since.getTime() ? live({ until: new Date(lo) }) : undefined;
  const res = await db
    .selectNoFrom((eb) => [
      days.as('days'),
      head ? head.as('head') : eb.val('0').as('head'),
      live({ since: new Date(hi) }).as('tail'),
    ])
    .executeTakeFirstOrThrow();
  return Number(res.days) + Number(res.head) + Number(res.tail);
}

/**
 * Up to where (ms, a UTC midnight) the org's days are counted in audit_log_daily, counting the days
 * that have closed since, once (the first reader after a day closes pays for that day). Undefined
 * when nothing is counted yet and another rollup or a pruning batch holds the lock: count live.
 */
async function rolledUntil(db: Executor, orgId: string, now: Date): Promise<number | undefined> {
  const closed = floorDay(now.getTime() - ROLLUP_GRACE_MS);
  const read = async (x: Executor) => {
    const r = await x
      .selectFrom('audit_log_rollups')
      .select('rolled_until')
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    return r ? r.rolled_until.getTime() : undefined;
  };
  const current = await read(db);
  if (current !== undefined && current >= closed) return current;
  const roll = async (trx: Executor) => {
    const lock = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_xact_lock(${sql.lit(DAILY_COUNTS_LOCK)}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return current;
    const from = await read(trx);
    if (from !== undefined && from >= closed) return from;
    await sql`insert into audit_log_daily (org_id, dim, value, day, n)
      select ${orgId}, v.dim, v.value, ${DAY_OF_ENTRY}, count(*)
      from audit_log a cross join lateral (values ${DIMS}) v(dim, value)
      where a.org_id = ${orgId} and v.value is not null and a."timestamp" < ${new Date(closed)}
        ${from !== undefined ? sql`and a."timestamp" >= ${new Date(from)}` : sql``}
      group by 2, 3, 4`.execute(trx);
    await trx
      .insertInto('audit_log_rollups')
      .values({ org_id: orgId, rolled_until: new Date(closed) })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ rolled_until: new Date(closed) }))
      .execute();
    return closed;
  };
  return db.isTransaction ? roll(db) : db.transaction().execute(roll);
}

/** The UTC midnight starting the day of entry `a`. */
const DAY_OF_ENTRY = sql`(date_trunc('day', a."timestamp" at time zone 'UTC') at time zone 'UTC')`;
/** The counts an entry `a` adds to: all, its action, its actor (not for system entries), its type. */
const DIMS = sql`('all', ''), ('action', a.action), ('actor', a.actor_user_id), ('type', a.resource_type)`;

/**
 * Deletes up to `batch` entries older than `cutoff` in orgs of `tier`, and takes them off their days'
 * counts in the same statement. Small batches keep each statement's locks and WAL short on a large
 * log; the caller loops until a batch comes back short.
 */
export async function pruneBatch(db: Executor, tier: string, cutoff: Date, batch: number): Promise<number> {
  const run = async (trx: Executor) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(DAILY_COUNTS_LOCK)})`.execute(trx);
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
      ), counted as (
        update audit_log_daily d set n = d.n - per.n from per
        where d.org_id = per.org_id and d.dim = per.dim and d.value = per.value and d.day = per.day
        returning 1
      )
      select (select count(*) from gone) as deleted, (select count(*) from counted) as counted`.execute(trx);
    return Number(res.rows[0].deleted);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** Drops the day counts that pruning brought to zero (a missing day counts zero). */
export async function dropEmptyDays(db: Executor): Promise<void> {
  await db.deleteFrom('audit_log_daily').where('n', '<=', '0').execute();
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
