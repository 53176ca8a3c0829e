import type { Executor, Trx } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newId, uuid } from '../lib/ids.js';
import { insertAuditEntry } from './audit-log.queries.js';
import type { EventType } from './catalog.js';
import { insertEvent } from './outbox.queries.js';

export interface RecordedEvent {
  id: string;
  orgId: string;
  type: EventType;
  actorUserId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Called inside the mutation's transaction for each event recorded, so a subscriber (the webhook
 * outbox) writes its rows atomically with the change. A sink must not call out over the network.
 */
export type EventSink = (trx: Trx, event: RecordedEvent) => Promise<void>;

const sinks: EventSink[] = [];

/** Registers a sink once (idempotent by reference). */
export function addEventSink(sink: EventSink): void {
  if (!sinks.includes(sink)) sinks.push(sink);
}

/**
 * Answers whether anything consumes `type` events of an org. Registered by the webhook module; the
 * high-volume `token.*` events are recorded only when it says yes, since they exist to be delivered.
 */
export type EventInterest = (db: Executor, orgId: string, type: EventType) => Promise<boolean>;

let interest: EventInterest | null = null;

export function setEventInterest(fn: EventInterest): void {
  interest = fn;
}

/** Whether recording a high-volume event for `orgId` would reach anyone (true when unknown). */
export async function isEventWanted(db: Executor, orgId: string, type: EventType): Promise<boolean> {
  return interest ? interest(db, orgId, type) : true;
}

export interface Mutation {
  orgId: string;
  /** null for system actions. */
  actorUserId: string | null;
  /** Audit action, such as `org.created`, `member.role.added`, `app.secret.rotated`. */
  action: string;
  resourceType: string;
  resourceId: string;
  /** Audit metadata. Never a secret. */
  metadata?: Record<string, unknown>;
  /** Catalog events this change fires, `data` shaped as the interface lists. */
  events?: Array<{ type: EventType; data: Record<string, unknown> }>;
  /** Skip the audit entry (only `token.*` events, which the audit log does not need). */
  auditless?: boolean;
}

/**
 * The one mutation path: call it inside the transaction that makes the change. It writes the audit
 * entry and the event records (and, through the sinks, the webhook deliveries) so that all of them
 * commit with the change or not at all.
 */
export async function recordMutation(trx: Trx, clock: Clock, m: Mutation): Promise<RecordedEvent[]> {
  const now = clock.now();
  if (!m.auditless) {
    await insertAuditEntry(trx, {
      id: newId('log_'),
      org_id: m.orgId,
      actor_user_id: m.actorUserId,
      action: m.action,
      resource_type: m.resourceType,
      resource_id: m.resourceId,
      metadata: m.metadata ? JSON.stringify(m.metadata) : null,
      timestamp: now,
    });
  }
  const recorded: RecordedEvent[] = [];
  for (const e of m.events ?? []) {
    const event: RecordedEvent = {
      id: uuid(),
      orgId: m.orgId,
      type: e.type,
      actorUserId: m.actorUserId,
      data: e.data,
      createdAt: now,
    };
    await insertEvent(trx, {
      id: event.id,
      org_id: event.orgId,
      type: event.type,
      actor_user_id: event.actorUserId,
      data: JSON.stringify(event.data),
      created_at: now,
    });
    for (const sink of sinks) await sink(trx, event);
    recorded.push(event);
  }
  return recorded;
}

/** `before`/`after` holding only the fields that changed (oidcClient.updated, tokenGate.updated). */
export function diff<T extends Record<string, unknown>>(
  before: T,
  after: T,
  fields: Array<keyof T>,
): { before: Partial<T>; after: Partial<T> } {
  const b: Partial<T> = {};
  const a: Partial<T> = {};
  for (const f of fields) {
    if (JSON.stringify(before[f]) !== JSON.stringify(after[f])) {
      b[f] = before[f];
      a[f] = after[f];
    }
  }
  return { before: b, after: a };
}
