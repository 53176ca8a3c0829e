import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { Executor, OrgRow, Trx } from '../../db/schema.js';
import { EVENT_TYPES, type EventType, subscribes } from '../../events/catalog.js';
import { type InvalidationBus, invalidateEverywhere } from '../../events/invalidation.js';
import { type EventSink, recordMutation } from '../../events/outbox.js';
import { type FieldError, notFound, unprocessable, validationFailed } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId, uuid } from '../../lib/ids.js';
import { newWebhookSecret } from './delivery.js';
import * as q from './webhooks.queries.js';
import type {
  CreateWebhookInput,
  DeliveriesQueryInput,
  DeliveryRecord,
  UpdateWebhookInput,
  WebhookView,
} from './webhooks.schemas.js';
import { URL_MAX } from './webhooks.schemas.js';
import type { WebhookWorker } from './worker.js';

// ---------------------------------------------------------------- presentation

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

export function presentWebhook(w: q.WebhookRow): WebhookView {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    enabled: w.enabled,
    consecutiveFailures: w.consecutive_failures,
    lastDeliveredAt: iso(w.last_delivered_at),
    disabledAt: iso(w.disabled_at),
    createdAt: iso(w.created_at)!,
    updatedAt: iso(w.updated_at)!,
  };
}

export function presentDelivery(d: q.DeliveryView): DeliveryRecord {
  return {
    id: d.id,
    event: d.event,
    url: d.url,
    status: d.status,
    responseCode: d.response_code ?? undefined,
    responseBodyExcerpt: d.response_body_excerpt ?? undefined,
    attemptCount: d.attempt_count,
    queuedAt: iso(d.queued_at)!,
    deliveredAt: iso(d.delivered_at),
    nextAttemptAt: d.status === 'pending' ? iso(d.next_attempt_at) : undefined,
  };
}

// ---------------------------------------------------------------- validation

function checkUrl(raw: string, errors: FieldError[]): void {
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    errors.push({ field: 'url', code: 'format', message: 'must be an absolute URL' });
    return;
  }
  if (u.protocol !== 'https:')
    errors.push({ field: 'url', code: 'https_required', message: 'must use https' });
  else if (u.username || u.password)
    errors.push({ field: 'url', code: 'format', message: 'must not contain credentials' });
  else if (!u.hostname) errors.push({ field: 'url', code: 'format', message: 'must name a host' });
  else if (u.href.length > URL_MAX)
    errors.push({ field: 'url', code: 'max_length', message: `must be at most ${URL_MAX} characters` });
}

/** Event names from the catalog, or `*`: de-duplicated and sorted, so the order does not matter. */
function normalizeEvents(events: string[], errors: FieldError[]): string[] {
  const known = new Set<string>([...EVENT_TYPES, '*']);
  const bad = events.filter((e) => !known.has(e));
  if (bad.length > 0)
    errors.push({
      field: 'events',
      code: 'unknown_event',
      message: `unknown event names: ${bad.slice(0, 5).join(', ')}; use catalog names or "*"`,
    });
  return [...new Set(events)].sort();
}

function validate(input: { url?: string; events?: string[] }): { url?: string; events?: string[] } {
  const errors: FieldError[] = [];
  if (input.url !== undefined) checkUrl(input.url, errors);
  const events = input.events === undefined ? undefined : normalizeEvents(input.events, errors);
  if (errors.length > 0) throw validationFailed(errors);
  return { url: input.url, events };
}

const eventsKey = (events: string[]) => events.join(',');
const secretAad = (webhookId: string) => `webhook:${webhookId}`;

// ---------------------------------------------------------------- webhooks

export async function createWebhook(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  input: CreateWebhookInput,
): Promise<WebhookView & { secret: string }> {
  const { url, events } = validate(input) as { url: string; events: string[] };
  const id = newId('wh_');
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const row: q.WebhookRow = {
    id,
    org_id: org.id,
    url,
    events,
    events_key: eventsKey(events),
    secret_enc: ctx.encryptor.encrypt(secret, secretAad(id)),
    enabled: true,
    consecutive_failures: 0,
    last_delivered_at: null,
    disabled_at: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    if ((await q.countWebhooksLocked(trx, org.id)) >= defaults.webhooksPerOrgMax)
      throw unprocessable(
        `an organization holds at most ${defaults.webhooksPerOrgMax} webhooks: delete one, or subscribe an existing one to more events`,
        { limit: defaults.webhooksPerOrgMax },
      );
    await q.insertWebhook(trx, row).catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'webhook.created',
      resourceType: 'webhook',
      resourceId: id,
      metadata: { url, events },
    });
    await ctx.invalidation.publish('webhooks', [org.id], trx);
  });
  ctx.invalidation.applied('webhooks', [org.id]);
  return { ...presentWebhook(row), secret };
}

export async function listWebhooks(
  ctx: AppContext,
  orgId: string,
): Promise<{ items: WebhookView[]; total: number }> {
  const rows = await q.listWebhooks(ctx.db, orgId);
  return { items: rows.map(presentWebhook), total: rows.length };
}

async function mustFind(ctx: AppContext, orgId: string, id: string): Promise<q.WebhookRow> {
  const w = await q.findWebhook(ctx.db, orgId, id);
  if (!w) throw notFound('webhook');
  return w;
}

export async function getWebhook(ctx: AppContext, orgId: string, id: string): Promise<WebhookView> {
  return presentWebhook(await mustFind(ctx, orgId, id));
}

export async function updateWebhook(
  ctx: AppContext,
  orgId: string,
  actorUserId: string,
  id: string,
  input: UpdateWebhookInput,
): Promise<WebhookView> {
  const { url, events } = validate(input);
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const before = await q.findWebhookForUpdate(trx, orgId, id);
    if (!before) throw notFound('webhook');
    const now = ctx.clock.now();
    const set: Parameters<typeof q.updateWebhook>[3] = { updated_at: now };
    if (url !== undefined) set.url = url;
    if (events !== undefined) {
      set.events = events;
      set.events_key = eventsKey(events);
    }
    if (input.enabled === true && !before.enabled) {
      // Re-enabling (after an auto-disable or a manual one) starts the failure count afresh.
      set.enabled = true;
      set.consecutive_failures = 0;
      set.disabled_at = null;
    } else if (input.enabled === false && before.enabled) {
      set.enabled = false;
    }
    const after = await q.updateWebhook(trx, orgId, id, set).catch(mapDbError);
    if (!after) throw notFound('webhook');
    const changed: Record<string, unknown> = {};
    if (url !== undefined && url !== before.url) changed.url = url;
    if (events !== undefined && eventsKey(events) !== before.events_key) changed.events = events;
    if (after.enabled !== before.enabled) changed.enabled = after.enabled;
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId,
      action: 'webhook.updated',
      resourceType: 'webhook',
      resourceId: id,
      metadata: { changed },
    });
    await ctx.invalidation.publish('webhooks', [orgId], trx);
    return presentWebhook(after);
  });
  ctx.invalidation.applied('webhooks', [orgId]);
  return updated;
}

/** Deletes the webhook; its pending deliveries go with it (the rows cascade), so they stop. */
export async function deleteWebhook(
  ctx: AppContext,
  orgId: string,
  actorUserId: string,
  id: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const w = await q.findWebhookForUpdate(trx, orgId, id);
    if (!w) throw notFound('webhook');
    await q.deleteWebhook(trx, orgId, id);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId,
      action: 'webhook.deleted',
      resourceType: 'webhook',
      resourceId: id,
      metadata: { url: w.url },
    });
    await ctx.invalidation.publish('webhooks', [orgId], trx);
  });
  ctx.invalidation.applied('webhooks', [orgId]);
}

/** A new secret, effective at once: the next attempt of any delivery signs with it. */
export async function rotateSecret(
  ctx: AppContext,
  orgId: string,
  actorUserId: string,
  id: string,
): Promise<{ secret: string }> {
  const secret = newWebhookSecret();
  await ctx.db.transaction().execute(async (trx) => {
    const updated = await q.updateWebhook(trx, orgId, id, {
      secret_enc: ctx.encryptor.encrypt(secret, secretAad(id)),
      updated_at: ctx.clock.now(),
    });
    if (!updated) throw notFound('webhook');
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId,
      action: 'webhook.secret.rotated',
      resourceType: 'webhook',
      resourceId: id,
    });
  });
  return { secret };
}

/** Org deletion: every webhook of the org stops receiving (wiring.ts registers it with the orgs module). */
export async function disableOrgWebhooks(trx: Trx, orgId: string, clock: Clock): Promise<void> {
  await q.disableAllWebhooks(trx, orgId, clock.now());
  await invalidateEverywhere(trx, 'webhooks', [orgId]);
}

// ---------------------------------------------------------------- deliveries

/** The body of every attempt, fixed when the delivery is created. */
export function envelope(e: {
  id: string;
  type: string;
  timestamp: Date;
  org: string;
  actorUserId: string | null;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({
    id: e.id,
    type: e.type,
    timestamp: e.timestamp.toISOString(),
    org: e.org,
    actorUserId: e.actorUserId,
    data: e.data,
  });
}

interface Interest {
  at: number;
  events: string[][];
}

const interestCache = new Map<string, Interest>();
/** Bumped by every invalidation so that a read racing with a webhook write does not cache the old rows. */
let interestGeneration = 0;
/** The read of an org's webhooks under way on the pool, shared by the callers that find its entry stale. */
const interestLoads = new Map<string, { generation: number; load: Promise<Interest> }>();
/** The invalidation channels of the apps in this process: the cache serves only while all listen. */
const interestBuses = new Set<InvalidationBus>();

/**
 * Keeps the interest cache in step with webhook writes on every instance (`webhooks` topic) and off
 * while `bus` is not listening. Returns the unsubscribe.
 */
export function followWebhookChanges(bus: InvalidationBus): () => void {
  interestBuses.add(bus);
  const off = bus.on('webhooks', (orgId) => forgetInterest(orgId));
  return () => {
    off();
    interestBuses.delete(bus);
  };
}

function interestCacheUsable(): boolean {
  for (const bus of interestBuses) if (!bus.healthy) return false;
  return true;
}

/**
 * Whether any enabled webhook of the org subscribes to `type`. Cached for a second per org (and
 * dropped at once on every instance by webhook writes), so the token endpoint does not read the
 * webhooks table per token. When the entry goes stale under load, one read refreshes it: the
 * requests that arrive meanwhile wait for that read instead of each sending its own.
 */
export async function webhookInterest(db: Executor, orgId: string, type: EventType): Promise<boolean> {
  const usable = interestCacheUsable();
  let cached = usable ? interestCache.get(orgId) : undefined;
  if (!cached || Date.now() - cached.at > defaults.webhookInterestTtlMs) {
    cached =
      usable && !db.isTransaction ? await sharedInterestLoad(db, orgId) : await loadInterest(db, orgId);
  }
  return cached.events.some((events) => subscribes(events, type));
}

async function loadInterest(db: Executor, orgId: string): Promise<Interest> {
  const generation = interestGeneration;
  const hooks = await q.enabledWebhooksOfOrg(db as Trx, orgId);
  const loaded = { at: Date.now(), events: hooks.map((h) => h.events) };
  if (generation === interestGeneration) {
    if (interestCache.size > defaults.webhookInterestMaxOrgs) interestCache.clear();
    interestCache.set(orgId, loaded);
  }
  return loaded;
}

/**
 * Joins the org's read under way when it started after the last invalidation (a read begun before a
 * webhook write may miss it, so a caller after the write reads again). Only reads on the pool are
 * shared: one inside a caller's transaction sees that transaction's writes and shares its failures.
 */
function sharedInterestLoad(db: Executor, orgId: string): Promise<Interest> {
  const under = interestLoads.get(orgId);
  if (under && under.generation === interestGeneration) return under.load;
  const entry = { generation: interestGeneration, load: loadInterest(db, orgId) };
  interestLoads.set(orgId, entry);
  const settled = () => {
    if (interestLoads.get(orgId) === entry) interestLoads.delete(orgId);
  };
  entry.load.then(settled, settled);
  return entry.load;
}

export function forgetInterest(orgId: string): void {
  interestGeneration++;
  if (orgId === '*') interestCache.clear();
  else interestCache.delete(orgId);
}

/**
 * The outbox sink: runs in the transaction that records an event and queues one delivery per enabled,
 * subscribed webhook of the org, so deliveries commit with the change or not at all.
 */
export const webhookOutboxSink: EventSink = async (trx, event) => {
  const hooks = await q.enabledWebhooksOfOrg(trx, event.orgId);
  const targets = hooks.filter((h) => subscribes(h.events, event.type));
  if (targets.length === 0) return;
  const rows: q.NewDelivery[] = targets.map((h) => {
    const id = uuid();
    return {
      id,
      webhook_id: h.id,
      org_id: event.orgId,
      event_id: event.id,
      event: event.type,
      url: h.url,
      body: envelope({
        id,
        type: event.type,
        timestamp: event.createdAt,
        org: h.slug,
        actorUserId: event.actorUserId,
        data: event.data,
      }),
      status: 'pending',
      response_code: null,
      response_body_excerpt: null,
      attempt_count: 0,
      queued_at: event.createdAt,
      delivered_at: null,
      next_attempt_at: event.createdAt,
      locked_until: null,
      replay_of: null,
    };
  });
  await q.insertDeliveriesAndNotify(trx, rows);
};

/**
 * A `webhook.test` delivery to this webhook only. The route sends the first attempt itself: the row
 * is inserted already leased to this request, so no worker takes it meanwhile; later retries are the
 * workers' as usual.
 */
export async function testWebhook(
  ctx: AppContext,
  worker: WebhookWorker,
  org: OrgRow,
  actorUserId: string,
  id: string,
): Promise<DeliveryRecord> {
  const deliveryId = uuid();
  await ctx.db.transaction().execute(async (trx) => {
    const w = await q.findWebhookForUpdate(trx, org.id, id);
    if (!w) throw notFound('webhook');
    const now = ctx.clock.now();
    await q.insertDeliveries(trx, [
      {
        id: deliveryId,
        webhook_id: w.id,
        org_id: org.id,
        event_id: null,
        event: 'webhook.test',
        url: w.url,
        body: envelope({
          id: deliveryId,
          type: 'webhook.test',
          timestamp: now,
          org: org.slug,
          actorUserId,
          data: { test: true },
        }),
        status: 'pending',
        response_code: null,
        response_body_excerpt: null,
        attempt_count: 1,
        queued_at: now,
        delivered_at: null,
        next_attempt_at: now,
        locked_until: worker.leaseUntil(now),
        replay_of: null,
      },
    ]);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'webhook.tested',
      resourceType: 'webhook',
      resourceId: w.id,
      metadata: { deliveryId },
    });
  });
  const attempt = await q.attemptOf(ctx.db, deliveryId);
  if (attempt) await worker.process(attempt);
  const view = await q.findDeliveryView(ctx.db, deliveryId);
  if (!view) throw notFound('webhook');
  return presentDelivery(view);
}

export async function listDeliveries(
  ctx: AppContext,
  orgId: string,
  id: string,
  query: DeliveriesQueryInput,
): Promise<{ items: DeliveryRecord[]; total: number }> {
  await mustFind(ctx, orgId, id);
  const res = await q.listDeliveries(ctx.db, id, {
    status: query.status,
    event: query.event,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
    limit: query.limit,
    offset: query.offset,
  });
  return { items: res.items.map(presentDelivery), total: res.total };
}

/** The same payload under a fresh delivery id, queued now. */
export async function replayDelivery(
  ctx: AppContext,
  orgId: string,
  actorUserId: string,
  id: string,
  deliveryId: string,
): Promise<DeliveryRecord> {
  const newDeliveryId = uuid();
  await ctx.db.transaction().execute(async (trx) => {
    const w = await q.findWebhookForUpdate(trx, orgId, id);
    if (!w) throw notFound('webhook');
    const original = await q.findDelivery(trx, id, deliveryId);
    if (!original) throw notFound('delivery');
    const body = JSON.parse(original.body) as Record<string, unknown>;
    const now = ctx.clock.now();
    await q.insertDeliveries(trx, [
      {
        id: newDeliveryId,
        webhook_id: w.id,
        org_id: orgId,
        event_id: original.event_id,
        event: original.event,
        url: w.url,
        body: JSON.stringify({ ...body, id: newDeliveryId }),
        status: 'pending',
        response_code: null,
        response_body_excerpt: null,
        attempt_count: 0,
        queued_at: now,
        delivered_at: null,
        next_attempt_at: now,
        locked_until: null,
        replay_of: original.id,
      },
    ]);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId,
      action: 'webhook.delivery.replayed',
      resourceType: 'webhook',
      resourceId: w.id,
      metadata: { deliveryId: original.id, replayDeliveryId: newDeliveryId },
    });
    await q.notifyWorkers(trx);
  });
  const view = await q.findDeliveryView(ctx.db, newDeliveryId);
  if (!view) throw notFound('delivery');
  return presentDelivery(view);
}
