import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db, Executor } from '../db/schema.js';
import { connectionSettings } from '../db/index.js';
import { isEventWanted, recordMutation } from '../events/outbox.js';
import type { Clock } from '../lib/clock.js';
import type { EventStore, TokenEvent } from '../oidc/stores.js';

/**
 * Group commit for `token.*` events of grants that write nothing else (client credentials): each
 * request waits until its event is committed, but the events that arrive while a transaction runs
 * share the next one, so a burst costs a transaction per batch rather than per token. A few batches
 * may be in flight at once (`lanes`): writing is bound by database round trips, not by CPU.
 */
export class TokenEventWriter {
  private queue: Array<TokenEvent & { done: (err?: unknown) => void }> = [];
  private active = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly lanes = 4,
    private readonly maxBatch = 8,
  ) {}

  record(event: TokenEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ...event, done: (err) => (err ? reject(err) : resolve()) });
      if (this.active < this.lanes) void this.lane();
    });
  }

  private async lane(): Promise<void> {
    this.active++;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.db.transaction().execute((trx) => this.write(trx, batch));
          for (const e of batch) e.done();
        } catch (err) {
          for (const e of batch) e.done(err);
        }
      }
    } finally {
      this.active--;
    }
  }

  private async write(trx: Executor, batch: TokenEvent[]): Promise<void> {
    const groups = new Map<string, TokenEvent[]>();
    for (const e of batch) {
      const key = `${e.orgId}\u0000${e.actorUserId ?? ''}`;
      const list = groups.get(key);
      if (list) list.push(e);
      else groups.set(key, [e]);
    }
    for (const list of groups.values()) {
      await recordMutation(trx as never, this.clock, {
        orgId: list[0].orgId,
        actorUserId: list[0].actorUserId,
        action: 'token.issued',
        resourceType: 'app',
        resourceId: String(list[0].data.app),
        auditless: true,
        events: list.map((e) => ({ type: e.type, data: e.data })),
      });
    }
  }
}

/** Connections of the event writer's own pool on PostgreSQL: one per lane. */
const EVENT_LANES = 8;

export interface EventStoreDeps {
  clock: Clock;
  /** PostgreSQL: where the writer's own pool connects; absent on the embedded database. */
  postgres?: { connectionString: string; schema?: string };
  /** Registers what to close with the context. */
  onClose: (stop: () => Promise<void>) => void;
}

/**
 * The writer, made on first use. On PostgreSQL it has its own small pool, one connection per lane,
 * so a burst of token events neither waits for nor starves the request pool; the embedded database
 * has one connection and shares it.
 */
function lazyWriter(db: Db, deps: EventStoreDeps): () => TokenEventWriter {
  let writer: TokenEventWriter | undefined;
  return () => {
    if (writer) return writer;
    if (deps.postgres) {
      const { connectionString, schema } = deps.postgres;
      const pool = new pg.Pool({ ...connectionSettings(connectionString, schema), max: EVENT_LANES });
      const own = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
      deps.onClose(() => own.destroy());
      writer = new TokenEventWriter(own, deps.clock, EVENT_LANES);
    } else {
      writer = new TokenEventWriter(db, deps.clock, 1);
    }
    return writer;
  };
}

/** The outbox as the engine uses it (`audit_log` and `events` belong to src/events). */
export function eventStore(db: Db, deps: EventStoreDeps): EventStore {
  const writer = lazyWriter(db, deps);
  return {
    wanted: (tx, orgId, type) => isEventWanted(tx ?? db, orgId, type),
    async record(tx, mutation) {
      await recordMutation(tx as never, deps.clock, mutation);
    },
    recordBatched: (event) => writer().record(event),
  };
}
