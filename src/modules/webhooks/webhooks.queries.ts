import { type Insertable, type Selectable, sql } from 'kysely';
export type { DeliveryStatus } from '../../db/schema.js';
import type { Db, DeliveryStatus, Trx, WebhookDeliveriesTable, WebhooksTable } from '../../db/schema.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewDelivery = Insertable<WebhookDeliveriesTable>;
type Conn = Db | Trx;

/** Columns of a delivery that the API shows (never the lease or the body). */
const DELIVERY_COLUMNS = [
  'id',
  'webhook_id',
  'event',
  'url',
  'status',
  'response_code',
  'response_body_excerpt',
  'attempt_count',
  'queued_at',
  'delivered_at',
  'next_attempt_at',
] as const;
export type DeliveryView = Pick<DeliveryRow, (typeof DELIVERY_COLUMNS)[number]>;

export async function insertWebhook(db: Conn, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

/**
 * How many webhooks the org holds, counted under a transaction-scoped lock of its webhook list, so
 * two creations at once cannot both pass the bound (`trx` must be a transaction).
 */
export async function countWebhooksLocked(trx: Conn, orgId: string): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${orgId}`}, 0))`.execute(trx);
  const row = await trx
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findWebhook(db: Conn, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Locks the webhook row for the rest of the transaction (updates read-modify-write it). */
export async function findWebhookForUpdate(
  trx: Trx,
  orgId: string,
  id: string,
): Promise<WebhookRow | undefined> {
  return trx
    .selectFrom('webhooks')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function listWebhooks(db: Conn, orgId: string): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

export async function updateWebhook(
  trx: Trx,
  orgId: string,
  id: string,
  values: Partial<Omit<WebhookRow, 'id' | 'org_id' | 'created_at'>>,
): Promise<WebhookRow | undefined> {
  return trx
    .updateTable('webhooks')
    .set(values)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteWebhook(trx: Trx, orgId: string, id: string): Promise<boolean> {
  const res = await trx
    .deleteFrom('webhooks')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Every webhook of an org is switched off (org deletion): no new deliveries, pending ones pause. */
export async function disableAllWebhooks(trx: Trx, orgId: string, now: Date): Promise<number> {
  const res = await trx
    .updateTable('webhooks')
    .set({ enabled: false, updated_at: now })
    .where('org_id', '=', orgId)
    .where('enabled', '=', true)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Enabled webhooks of an org, with the org slug (the envelope's `org`). */
export async function enabledWebhooksOfOrg(
  trx: Trx,
  orgId: string,
): Promise<Array<{ id: string; url: string; events: string[]; slug: string }>> {
  return trx
    .selectFrom('webhooks as w')
    .innerJoin('orgs as o', 'o.id', 'w.org_id')
    .select(['w.id', 'w.url', 'w.events', 'o.slug'])
    .where('w.org_id', '=', orgId)
    .where('w.enabled', '=', true)
    .execute();
}

export async function insertDeliveries(db: Conn, rows: NewDelivery[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('webhook_deliveries').values(rows).execute();
}

/** Wakes the delivery workers of every instance on this schema once the transaction commits. */
export async function notifyWorkers(trx: Trx): Promise<void> {
  await sql`select pg_notify(${WORKER_CHANNEL}, current_schema())`.execute(trx);
}

/** Queues deliveries and wakes the workers (on commit) in one round trip: the outbox sink's hot path. */
export async function insertDeliveriesAndNotify(trx: Conn, rows: NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  const insert = trx.insertInto('webhook_deliveries').values(rows);
  await sql`with queued as (${insert}) select pg_notify(${WORKER_CHANNEL}, current_schema())`.execute(trx);
}
export const WORKER_CHANNEL = 'gatehouse_webhooks';

export async function findDelivery(
  db: Conn,
  webhookId: string,
  id: string,
): Promise<
  | (DeliveryView & { body: string; org_id: string; event_id: string | null; replay_of: string | null })
  | undefined
> {
  return db
    .selectFrom('webhook_deliveries')
    .select([...DELIVERY_COLUMNS, 'body', 'org_id', 'event_id', 'replay_of'])
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findDeliveryView(db: Conn, id: string): Promise<DeliveryView | undefined> {
  return db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export interface DeliveryFilter {
  status?: DeliveryStatus | 'failed';
  event?: string;
  since?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

export async function listDeliveries(
  db: Conn,
  webhookId: string,
  f: DeliveryFilter,
): Promise<{ items: DeliveryView[]; total: number }> {
  let q = db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId);
  if (f.status === 'failed')
    q = q.where('status', 'in', ['failed_timeout', 'failed_status', 'failed_network']);
  else if (f.status) q = q.where('status', '=', f.status);
  if (f.event) q = q.where('event', '=', f.event);
  if (f.since) q = q.where('queued_at', '>=', f.since);
  if (f.until) q = q.where('queued_at', '<', f.until);
  const [items, count] = await Promise.all([
    q
      .select(DELIVERY_COLUMNS)
      .orderBy('queued_at', 'desc')
      .orderBy('id', 'desc')
      .limit(f.limit)
      .offset(f.offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

/**
 * A claimed attempt: the delivery plus what sending needs from its webhook. A back-channel logout
 * delivery (kind `backchannel_logout`) has no webhook: its app instead, and no secret (the logout
 * token it carries is signed with the issuer's key).
 */
export interface ClaimedAttempt {
  id: string;
  kind: 'webhook' | 'backchannel_logout';
  webhook_id: string | null;
  app_id: string | null;
  org_id: string;
  event: string;
  body: string;
  attempt_count: number;
  url: string;
  secret_enc: string | null;
}

/**
 * Claims up to `limit` due attempts in one statement: pending rows whose time has come, not leased
 * by another instance, of enabled webhooks. SKIP LOCKED lets several instances claim side by side
 * without waiting on or taking each other's rows; the lease (`locked_until`) keeps a row from being
 * claimed again while its attempt is in flight, and `attempt_count` is bumped here so that a late
 * result from an expired lease can be told apart.
 */
export async function claimDue(
  db: Conn,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedAttempt[]> {
  // Each attempt goes to the current URL: a webhook's, or the app's back-channel logout URI (an app
  // that changed it is told at the new one; one that removed it or was disabled is not told).
  const res = await sql<ClaimedAttempt>`
    update webhook_deliveries d
       set attempt_count = d.attempt_count + 1, locked_until = ${leaseUntil}, url = c.url
      from (
         select dd.id, coalesce(ww.url, aa.backchannel_logout_uri) as url, ww.secret_enc
           from webhook_deliveries dd
           left join webhooks ww on ww.id = dd.webhook_id
           left join apps aa on aa.id = dd.app_id
          where dd.status = 'pending'
            and dd.next_attempt_at <= ${now}
            and (dd.locked_until is null or dd.locked_until <= ${now})
            and (ww.enabled or (aa.enabled and aa.backchannel_logout_uri is not null))
          order by dd.next_attempt_at
          limit ${limit}
          for update of dd skip locked) c
     where d.id = c.id
    returning d.id, d.kind, d.webhook_id, d.app_id, d.org_id, d.event, d.body, d.attempt_count, c.url,
              c.secret_enc`.execute(db);
  return res.rows;
}

/** The secret and URL of a delivery claimed at insert time (the test route's first attempt). */
export async function attemptOf(db: Conn, deliveryId: string): Promise<ClaimedAttempt | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select([
      'd.id',
      'd.kind',
      'd.webhook_id',
      'd.app_id',
      'd.org_id',
      'd.event',
      'd.body',
      'd.attempt_count',
      'w.url',
      'w.secret_enc',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export interface SuccessRecord {
  id: string;
  attempt: number;
  at: Date;
  code: number;
  excerpt: string;
}

/**
 * Records successful attempts in one statement (the worker batches them) and resets their webhooks'
 * failure counts. A webhook row is written only when something changes (failures to reset, or a
 * later `lastDeliveredAt`), so a busy webhook does not serialise its deliveries on its row lock.
 * A row whose attempt number moved on (an expired lease re-claimed elsewhere) is left alone.
 */
export async function recordSuccesses(db: Conn, items: SuccessRecord[]): Promise<number> {
  if (items.length === 0) return 0;
  const res = await sql<{ n: number }>`
    with v as (
      select * from unnest(
        ${items.map((i) => i.id)}::text[],
        ${items.map((i) => i.attempt)}::int[],
        ${items.map((i) => i.code)}::int[],
        ${items.map((i) => i.excerpt)}::text[],
        ${items.map((i) => i.at.toISOString())}::timestamptz[]
      ) as v(id, attempt, code, excerpt, at)),
    d as (
      update webhook_deliveries d
         set status = 'succeeded', response_code = v.code, response_body_excerpt = v.excerpt,
             delivered_at = v.at, next_attempt_at = null, locked_until = null
        from v
       where d.id = v.id and d.attempt_count = v.attempt and d.status = 'pending'
       returning d.webhook_id, v.at),
    m as (select webhook_id, max(at) as at from d group by webhook_id),
    w as (
      update webhooks
         set consecutive_failures = 0, last_delivered_at = m.at
        from m
       where webhooks.id = m.webhook_id
         and (webhooks.consecutive_failures <> 0 or webhooks.last_delivered_at is null
              or webhooks.last_delivered_at < m.at)
       returning webhooks.id)
    select count(*)::int as n from d`.execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

/** A failed attempt with retries left: back to pending, due at `nextAttemptAt`. */
export async function recordRetry(
  db: Conn,
  a: { id: string; attempt: number; nextAttemptAt: Date; code: number | null; excerpt: string | null },
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      response_code: a.code,
      response_body_excerpt: a.excerpt,
      next_attempt_at: a.nextAttemptAt,
      locked_until: null,
    })
    .where('id', '=', a.id)
    .where('attempt_count', '=', a.attempt)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * The last attempt failed: the delivery takes that failure status for good. Returns its webhook id
 * (null for a back-channel logout delivery) and app id (null for a webhook's).
 */
export async function recordFinalFailure(
  trx: Trx,
  a: { id: string; attempt: number; status: DeliveryStatus; code: number | null; excerpt: string | null },
): Promise<{ webhook_id: string | null; app_id: string | null } | undefined> {
  const row = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: a.status,
      response_code: a.code,
      response_body_excerpt: a.excerpt,
      next_attempt_at: null,
      locked_until: null,
    })
    .where('id', '=', a.id)
    .where('attempt_count', '=', a.attempt)
    .where('status', '=', 'pending')
    .returning(['webhook_id', 'app_id'])
    .executeTakeFirst();
  return row;
}

/** Counts one more exhausted delivery; returns the new count and whether the webhook is enabled. */
export async function bumpFailures(
  trx: Trx,
  webhookId: string,
): Promise<{ consecutive_failures: number; enabled: boolean; org_id: string } | undefined> {
  return trx
    .updateTable('webhooks')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .where('id', '=', webhookId)
    .returning(['consecutive_failures', 'enabled', 'org_id'])
    .executeTakeFirst();
}

export async function autoDisable(trx: Trx, webhookId: string, now: Date): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ enabled: false, disabled_at: now, updated_at: now })
    .where('id', '=', webhookId)
    .execute();
}

/**
 * The queue as a metric: deliveries waiting for an attempt (retries scheduled included), and how
 * late the oldest due one is (0 when the worker keeps up). Reads the partial index of pending rows.
 */
export async function webhookQueueStats(
  db: Db,
  now: Date,
): Promise<{ depth: number; oldestAgeSeconds: number }> {
  const r = await sql<{ depth: number; oldest: Date | null }>`
    select count(*)::int as depth, min(next_attempt_at) filter (where next_attempt_at <= ${now}) as oldest
      from webhook_deliveries where status = 'pending'`.execute(db);
  const row = r.rows[0];
  const oldest = row?.oldest ? new Date(row.oldest).getTime() : null;
  return {
    depth: row?.depth ?? 0,
    oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
  };
}
