import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Config } from '../config/index.js';
import { defaults } from '../config/defaults.js';
import type { DatabaseHandle } from '../db/index.js';
import { currentSchema, notifyInSchema, notifyManyInSchema } from '../db/notify.js';
import type { Executor } from '../db/schema.js';

/**
 * What a per-instance cache of security state keeps, by topic; the key says which entry changed
 * (`*`: every entry). `app`: OAuth clients by client id (secrets, redirect URIs, disabled apps);
 * `keys`: the signing key set; `gate`/`gateOrg`: token-gate lookups by gate id / org id;
 * `webhooks`: an org's webhook subscriptions by org id; `token`: an access token's revocation state
 * by jti; `user`: a user's liveness, profile claims and wallets by user id.
 */
export type InvalidationTopic = 'app' | 'keys' | 'gate' | 'gateOrg' | 'webhooks' | 'token' | 'user';

const TOPICS: ReadonlySet<string> = new Set<InvalidationTopic>([
  'app',
  'keys',
  'gate',
  'gateOrg',
  'webhooks',
  'token',
  'user',
]);

/**
 * The PostgreSQL channel every instance listens on. Payload: `<schema>\t<origin>\t<topic>\t<key>`;
 * the origin names the instance that already applied the change locally (`-`: none did).
 */
export const INVALIDATION_CHANNEL = 'gatehouse_invalidate';

/** The marker topic `sync()` sends itself. */
const SYNC = 'sync';

/** Most bytes of a NOTIFY payload (PostgreSQL's limit is 8000). */
const MAX_PAYLOAD = 7900;

/**
 * Announces changed entries to every instance on the database (this one included), through
 * `pg_notify`. Run it inside the transaction that made the change when there is one: PostgreSQL
 * delivers the notification when (and only if) it commits.
 */
export async function publishInvalidation(
  db: Executor,
  topic: InvalidationTopic,
  keys: Iterable<string>,
  origin = '-',
): Promise<void> {
  const payloads: string[] = [];
  for (const key of keys) {
    const p = `\t${origin}\t${topic}\t${key}`;
    if (p.length > MAX_PAYLOAD) throw new Error('invalidation key too long');
    payloads.push(p);
  }
  // One round trip for the lot (a logout revokes a family's every unexpired access token).
  await notifyManyInSchema(db, INVALIDATION_CHANNEL, payloads);
}

type Handler = (key: string) => void;

/** Every started bus of this process (tests run several apps in one). */
const liveBuses = new Set<InvalidationBus>();

/**
 * For a change inside a transaction that has no context at hand (an org-deletion handler): drops
 * the entries in every app of this process now, and announces them to every instance (this one
 * again, closing the window before the commit) when `trx` commits.
 */
export async function invalidateEverywhere(
  trx: Executor,
  topic: InvalidationTopic,
  keys: Iterable<string>,
): Promise<void> {
  const list = [...keys];
  for (const bus of liveBuses) if (!bus.otherProcess) for (const k of list) bus.deliverLocal(topic, k);
  await publishInvalidation(trx, topic, list);
}

export interface InvalidationLog {
  warn(obj: unknown, msg?: string): void;
}

/** The liveness check of the channel (milliseconds; tests shorten them). */
export interface HeartbeatTiming {
  /** Between two round trips. */
  intervalMs: number;
  /** Most a round trip may take before the channel counts as lost. */
  timeoutMs: number;
  /** Before listening again after a failure. */
  retryMs: number;
}

/**
 * Cross-instance invalidation of the caches of security state (DESIGN.md §5: a rotated secret, a
 * disabled app, a new signing key, a changed gate or subscription takes effect on every instance at
 * once). Every instance LISTENs on one PostgreSQL channel (the embedded database delivers the same
 * notifications in process, so instances sharing it hear each other too).
 *
 * Fail closed: `healthy` is false while the channel is not listening (not yet connected, connection
 * lost, reconnecting); caches then read through to the database on every use. Each change of state
 * drops every cached entry, since notifications sent meanwhile were missed. A lost connection that
 * raises no error (a half-open socket, a pooler that does not keep LISTEN) is caught by a heartbeat:
 * every `intervalMs` the instance sends itself a notification; when it does not arrive within
 * `timeoutMs` the channel counts as lost. The channel counts as listening only once such a round trip
 * succeeded on the new connection.
 */
export class InvalidationBus {
  private readonly handlers = new Map<string, Set<Handler>>();
  private listening = false;
  private stopped = false;
  private schema = 'public';
  private unlisten: (() => Promise<void>) | null = null;
  private readonly waiting = new Map<string, () => void>();
  private timing: HeartbeatTiming = {
    intervalMs: defaults.invalidationHeartbeatMs,
    timeoutMs: defaults.invalidationHeartbeatTimeoutMs,
    retryMs: defaults.invalidationRetryMs,
  };
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** Ends the current connection and listens again (set while subscribed). */
  private dropConnection: (() => void) | null = null;
  /**
   * Test seam: while true, incoming notifications are lost the way a half-open connection loses
   * them (no error, nothing delivered).
   */
  deaf = false;
  /**
   * Test seam: while true, this instance stands for one in another process: `invalidateEverywhere`
   * does not reach it directly, only through the channel (two-instance tests prove the channel).
   */
  otherProcess = false;
  /**
   * This instance's name in payloads, so it skips the echo of what it applied already; also in its
   * listening connection's `application_name` (`gatehouse-invalidation-<id>`).
   */
  readonly id = randomBytes(6).toString('hex');

  constructor(
    private readonly database: DatabaseHandle,
    private readonly config: Config,
    private log?: InvalidationLog,
  ) {}

  /** Whether caches may serve from memory: the channel is listening. */
  get healthy(): boolean {
    return this.listening;
  }

  setLog(log: InvalidationLog): void {
    this.log = log;
  }

  /** Changes the heartbeat's timing (tests shorten it); the next beat follows the new interval. */
  setHeartbeat(timing: Partial<HeartbeatTiming>): void {
    this.timing = { ...this.timing, ...timing };
    if (this.heartbeatTimer) this.scheduleHeartbeat();
  }

  /** Subscribes to a topic; the handler hears each changed key (`*` for all). Returns the unsubscribe. */
  on(topic: InvalidationTopic, handler: Handler): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /**
   * Drops the entries on this instance now and announces them to every other instance. With `trx`
   * (the way to announce a change: no failure or crash after the commit can lose it), the
   * announcement goes out when that transaction commits, and the caller drops this instance's
   * entries with `applied` after the commit (its own notification is skipped, so listeners here
   * hear each change once).
   */
  async publish(topic: InvalidationTopic, keys: Iterable<string>, trx?: Executor): Promise<void> {
    const list = [...keys];
    // Inside a transaction the change is not visible yet: `applied` drops the entries at commit.
    if (!trx) for (const k of list) this.deliver(topic, k);
    try {
      await publishInvalidation(trx ?? this.database.db, topic, list, this.id);
    } catch (err) {
      if (trx) throw err;
      // The change is committed; entries elsewhere still expire by their TTL.
      this.log?.warn({ err, topic }, 'cache invalidation: could not notify other instances');
    }
  }

  /**
   * Resolves once every notification committed before this call has reached this instance: sends a
   * marker through the channel and waits for it (PostgreSQL delivers in commit order). Tests use it
   * to observe another instance's change without sleeping.
   */
  async sync(): Promise<void> {
    if (!this.listening) return;
    const id = randomBytes(8).toString('hex');
    const arrived = new Promise<void>((resolve) => this.waiting.set(id, resolve));
    await this.sendMarker(id);
    await arrived;
  }

  private async sendMarker(id: string): Promise<void> {
    await notifyInSchema(this.database.db, INVALIDATION_CHANNEL, `\t-\t${SYNC}\t${id}`);
  }

  /** Whether a marker sent now comes back through the channel within `timeoutMs`. */
  private async roundTrip(timeoutMs: number): Promise<boolean> {
    const id = randomBytes(8).toString('hex');
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.waiting.set(id, () => resolve(true));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      await this.sendMarker(id);
      return await arrived;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    if (this.stopped) return;
    this.heartbeatTimer = setTimeout(() => void this.beat(), this.timing.intervalMs);
    this.heartbeatTimer.unref();
  }

  private async beat(): Promise<void> {
    if (this.listening && !(await this.roundTrip(this.timing.timeoutMs)) && this.listening && !this.stopped) {
      this.log?.warn('cache invalidation: heartbeat lost; caches are off until the channel is back');
      this.setListening(false);
      const drop = this.dropConnection;
      this.dropConnection = null;
      drop?.();
    }
    this.scheduleHeartbeat();
  }

  /** Drops entries on this instance only (see `invalidateEverywhere`). */
  deliverLocal(topic: InvalidationTopic, key: string): void {
    this.deliver(topic, key);
  }

  /**
   * After a transaction that published with `trx` committed: drops the entries on this instance
   * (the other instances hear the notification at the commit).
   */
  applied(topic: InvalidationTopic, keys: Iterable<string>): void {
    for (const k of keys) this.deliver(topic, k);
  }

  private deliver(topic: string, key: string): void {
    const set = this.handlers.get(topic);
    if (!set) return;
    for (const h of set) {
      try {
        h(key);
      } catch (err) {
        this.log?.warn({ err, topic }, 'cache invalidation handler failed');
      }
    }
  }

  private flushAll(): void {
    for (const topic of this.handlers.keys()) this.deliver(topic, '*');
  }

  private onPayload(payload: string | null | undefined): void {
    if (!payload || this.deaf) return;
    const [schema, origin, topic, ...rest] = payload.split('\t');
    if (schema !== this.schema || origin === this.id) return;
    const key = rest.join('\t');
    if (topic === SYNC) {
      const resolve = this.waiting.get(key);
      if (resolve) {
        this.waiting.delete(key);
        resolve();
      }
      return;
    }
    if (TOPICS.has(topic)) this.deliver(topic, key);
  }

  private setListening(on: boolean): void {
    if (this.listening === on) return;
    this.listening = on;
    this.flushAll();
  }

  /** Starts listening; resolves when the channel is up (or failed: then caches stay off and it retries). */
  async start(): Promise<void> {
    this.schema = (await currentSchema(this.database.db)) ?? 'public';
    liveBuses.add(this);
    await this.subscribe();
    this.scheduleHeartbeat();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    liveBuses.delete(this);
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    this.dropConnection = null;
    this.setListening(false);
    const u = this.unlisten;
    this.unlisten = null;
    if (u) await u();
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
  }

  private async subscribe(): Promise<void> {
    if (this.stopped) return;
    const { database, config } = this;
    try {
      if (database.pglite) {
        const off = await database.pglite.listen(INVALIDATION_CHANNEL, (p) => this.onPayload(p));
        this.unlisten = async () => off();
        const drop = () => {
          this.unlisten = null;
          void off().catch(() => {});
          this.retrySoon();
        };
        if (!(await this.roundTrip(this.timing.timeoutMs))) {
          drop();
          return;
        }
        if (this.stopped) return;
        this.dropConnection = drop;
        this.setListening(true);
      } else if (database.kind === 'postgres' && config.databaseUrl) {
        await this.subscribePostgres(config.databaseUrl);
      }
    } catch (err) {
      this.setListening(false);
      this.log?.warn({ err }, 'cache invalidation: cannot listen; caches are off until it can');
      this.retrySoon();
    }
  }

  private retrySoon(): void {
    if (this.stopped) return;
    setTimeout(() => void this.subscribe(), this.timing.retryMs).unref();
  }

  private async subscribePostgres(url: string): Promise<void> {
    const client = new pg.Client({
      connectionString: url,
      // TCP keepalive: a peer gone without a reset ends the connection instead of leaving it open.
      keepAlive: true,
      application_name: `gatehouse-invalidation-${this.id}`,
    });
    let ended = false;
    const lost = () => {
      if (ended) return;
      ended = true;
      this.setListening(false);
      client.end().catch(() => {});
      if (this.stopped) return;
      this.log?.warn('cache invalidation: connection lost; caches are off until it is back');
      this.retrySoon();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel === INVALIDATION_CHANNEL) this.onPayload(n.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${INVALIDATION_CHANNEL}`);
    } catch (err) {
      ended = true;
      client.end().catch(() => {});
      throw err;
    }
    if (this.stopped) {
      ended = true;
      await client.end();
      return;
    }
    this.unlisten = async () => {
      ended = true;
      await client.end();
    };
    // Listening only once a notification has made it through this connection.
    if (!(await this.roundTrip(this.timing.timeoutMs))) {
      this.unlisten = null;
      lost();
      return;
    }
    if (this.stopped || ended) return;
    this.dropConnection = lost;
    this.setListening(true);
  }
}
