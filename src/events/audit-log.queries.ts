import type { Insertable, Selectable } from 'kysely';
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
 */
export async function queryAuditLog(
  db: Executor,
  orgId: string,
  f: AuditFilter,
): Promise<{ rows: AuditRow[]; total: number }> {
  const base = matching(db, orgId, f);
  const rows = await base
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
  const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/**
 * Deletes up to `batch` entries older than `cutoff` in orgs of `tier`. Small batches keep each
 * statement's locks and WAL short on a large log; the caller loops until a batch comes back short.
 */
export async function pruneBatch(db: Executor, tier: string, cutoff: Date, batch: number): Promise<number> {
  const res = await db
    .deleteFrom('audit_log')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('audit_log as a')
        .innerJoin('orgs as o', 'o.id', 'a.org_id')
        .select('a.id')
        .where('o.tier', '=', tier)
        .where('a.timestamp', '<', cutoff)
        .limit(batch),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
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
