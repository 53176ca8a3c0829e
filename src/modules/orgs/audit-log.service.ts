import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import {
  type AuditFilter,
  type AuditRow,
  dropEmptyDays,
  pruneBatch,
  queryAuditLog,
} from '../../events/audit-log.queries.js';
import { every, type ScheduledJob } from '../../lib/timer.js';
import type { AuditEntryView, AuditLogFilter } from './orgs.schemas.js';

const DAY_SECONDS = 24 * 3600;

export function presentEntry(r: AuditRow): AuditEntryView {
  const v: AuditEntryView = {
    id: r.id,
    org: r.org_id,
    actorUserId: r.actor_user_id,
    action: r.action,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    timestamp: r.timestamp.toISOString(),
  };
  if (r.metadata) v.metadata = r.metadata;
  return v;
}

/** The query's filters as the audit-log queries take them (the page and the export). */
export function auditFilterOf(
  q: Omit<AuditLogFilter, 'limit' | 'offset'>,
): Omit<AuditFilter, 'limit' | 'offset'> {
  return {
    action: q.action,
    actorUserId: q.actorUserId,
    resourceType: q.resourceType,
    resourceId: q.resourceId,
    since: q.since !== undefined ? new Date(q.since) : undefined,
    until: q.until !== undefined ? new Date(q.until) : undefined,
  };
}

export async function auditLog(
  ctx: AppContext,
  orgId: string,
  f: AuditLogFilter,
): Promise<{ items: AuditEntryView[]; total: number }> {
  const page = { ...auditFilterOf(f), limit: f.limit, offset: f.offset };
  const { rows, total } = await queryAuditLog(ctx.db, orgId, page, ctx.clock.now());
  return { items: rows.map(presentEntry), total };
}

/**
 * Deletes, permanently, the audit entries older than their org tier's retention
 * (`defaults.auditRetentionDays`; null keeps them forever, and an unknown tier is never pruned).
 * Returns how many entries went. Safe to run on several instances at once.
 */
export async function pruneAuditLog(ctx: AppContext): Promise<number> {
  const now = ctx.clock.nowMs();
  let deleted = 0;
  for (const [tier, days] of Object.entries(defaults.auditRetentionDays)) {
    if (days === null) continue;
    const cutoff = new Date(now - days * DAY_SECONDS * 1000);
    for (;;) {
      const n = await pruneBatch(ctx.db, tier, cutoff, defaults.auditPruneBatch);
      deleted += n;
      if (n < defaults.auditPruneBatch) break;
    }
  }
  if (deleted > 0) await dropEmptyDays(ctx.db);
  return deleted;
}

/**
 * Runs the pruning once a day (the first run a minute after start) on the jobs timer, stopped when
 * the context closes. Started by src/jobs.
 */
export function startAuditPruning(
  ctx: AppContext,
  log: { error(obj: unknown, msg: string): void },
): ScheduledJob {
  const job = every(
    { firstMs: defaults.auditPruneFirstRunDelay * 1000, everyMs: defaults.auditPruneInterval * 1000 },
    () => pruneAuditLog(ctx),
    (err) => log.error({ err }, 'audit log pruning failed'),
  );
  ctx.hooks.onClose.push(() => job.stop());
  return job;
}
