import pg from 'pg';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { recordMutation } from '../../events/outbox.js';
import { signLogoutToken } from '../../oidc/logout-token.js';
import {
  type AttemptResult,
  DeliveryClient,
  type DeliveryClientOptions,
  USER_AGENT,
  signedHeaders,
} from './delivery.js';
import {
  autoDisable,
  bumpFailures,
  type ClaimedAttempt,
  claimDue,
  recordFinalFailure,
  recordRetry,
  recordSuccesses,
  type SuccessRecord,
  WORKER_CHANNEL,
} from './webhooks.queries.js';

export interface WorkerOptions {
  /** Attempts claimed per query. */
  batchSize?: number;
  /** Attempts in flight at once in this instance. */
  concurrency?: number;
  /** How often an idle worker looks for due retries (notifications wake it sooner for new rows). */
  pollIntervalMs?: number;
  /** Listen for commit-time notifications of new deliveries (default true). */
  listen?: boolean;
  /** Delivery client settings; `allowPrivateNetworks` defaults to the configuration. */
  client?: Partial<DeliveryClientOptions>;
  /** Where operational problems are reported (the app's logger). Never given secrets or bodies. */
  log?: WorkerLog;
}

export interface WorkerLog {
  warn(obj: unknown, msg?: string): void;
}

/**
 * The delivery worker of one instance. Every instance runs one; they share the queue (the
 * `webhook_deliveries` rows) and claim attempts with FOR UPDATE SKIP LOCKED under a lease longer
 * than the response timeout, so each attempt is sent by exactly one instance. A crash mid-attempt
 * leaves the lease to expire and the row to be claimed again (at-least-once).
 *
 * `start()` runs the loop in the background; `runOnce()` lets tests drive it one step at a time.
 */
export class WebhookWorker {
  private client: DeliveryClient;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly listen: boolean;
  private readonly log?: WorkerLog;
  private running = false;
  private loopPromise: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private unlisten: (() => Promise<void>) | null = null;
  private readonly secrets = new Map<string, { sealed: string; secret: string }>();
  private readonly successQueue: Array<{
    rec: SuccessRecord;
    resolve: () => void;
    reject: (e: unknown) => void;
  }> = [];
  private flushing = false;
  private waitingForSlot = false;

  constructor(
    private readonly ctx: AppContext,
    opts: WorkerOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 100;
    this.concurrency = opts.concurrency ?? 200;
    this.pollIntervalMs = opts.pollIntervalMs ?? 500;
    this.listen = opts.listen ?? true;
    this.log = opts.log;
    this.client = this.makeClient(opts.client);
  }

  /** The lease is longer than the response timeout, so a live instance always finishes first. */
  private get leaseMs(): number {
    return this.client.timeoutMs + 30_000;
  }

  /** When a lease taken at `now` ends. */
  leaseUntil(now: Date): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  private makeClient(opts: Partial<DeliveryClientOptions> = {}): DeliveryClient {
    return new DeliveryClient({
      allowPrivateNetworks: this.ctx.config.webhookAllowPrivateNetworks,
      ...opts,
    });
  }

  /**
   * Replaces the delivery client (tests and benchmarks: a trusted CA for the local receiver, a short
   * timeout). Call it while the worker is stopped: attempts in flight on the old client fail.
   */
  configureClient(opts: Partial<DeliveryClientOptions>): void {
    this.client.close();
    this.client = this.makeClient(opts);
  }

  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.listen) await this.subscribe();
    this.loopPromise = this.loop();
  }

  /** Stops claiming, waits for attempts in flight to be recorded. Idempotent. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopPromise;
    this.loopPromise = null;
    await Promise.allSettled([...this.inFlight]);
    if (this.unlisten) {
      const u = this.unlisten;
      this.unlisten = null;
      await u().catch(() => {});
    }
  }

  /** Stops and releases sockets: the end of this worker. */
  async close(): Promise<void> {
    await this.stop();
    this.client.close();
  }

  /** Wakes the loop (new rows committed, or a slot freed). */
  wake(): void {
    this.woken = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Claims the attempts due now (at most one batch), sends them, records the results. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.batchSize);
    await Promise.all(claimed.map((a) => this.process(a)));
    return claimed.length;
  }

  private async claim(limit: number): Promise<ClaimedAttempt[]> {
    const now = this.ctx.clock.now();
    return claimDue(this.ctx.db, now, this.leaseUntil(now), limit);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let full = false;
      const free = this.concurrency - this.inFlight.size;
      if (free > 0) {
        const want = Math.min(free, this.batchSize);
        let claimed: ClaimedAttempt[] = [];
        try {
          claimed = await this.claim(want);
        } catch (err) {
          // The database is unreachable or closing: try again on the next tick.
          if (this.running) this.log?.warn({ err }, 'webhook worker: claiming deliveries failed');
        }
        for (const a of claimed) {
          const p: Promise<void> = this.process(a)
            .then(() => {})
            .catch((err) => {
              // The attempt stays leased and is sent again when the lease ends (at-least-once).
              this.log?.warn({ err, deliveryId: a.id }, 'webhook worker: recording an attempt failed');
            })
            .finally(() => {
              this.inFlight.delete(p);
              // Only a loop that stopped claiming for lack of slots needs waking for a free one.
              if (this.waitingForSlot) this.wake();
            });
          this.inFlight.add(p);
        }
        full = claimed.length === want;
      }
      if (!this.running) break;
      if (full && this.inFlight.size < this.concurrency) continue;
      if (this.woken) continue;
      this.waitingForSlot = this.inFlight.size >= this.concurrency;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollIntervalMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
      this.waitingForSlot = false;
    }
  }

  private secretOf(webhookId: string, sealed: string): string {
    const cached = this.secrets.get(webhookId);
    if (cached && cached.sealed === sealed) return cached.secret;
    const secret = this.ctx.encryptor.decrypt(sealed, `webhook:${webhookId}`);
    // Bounded: deleted webhooks' entries must not pile up.
    if (this.secrets.size >= defaults.webhookSecretCacheMax) this.secrets.clear();
    this.secrets.set(webhookId, { sealed, secret });
    return secret;
  }

  /**
   * What one attempt sends. A webhook's stored envelope, signed with its secret; a back-channel
   * logout delivery's stored claims become a logout token signed now (it lives 120 s, so every retry
   * carries a fresh one with the same `jti`), posted as the form OpenID Back-Channel Logout 1.0 names.
   */
  private async attemptRequest(
    a: ClaimedAttempt,
  ): Promise<{ headers: Record<string, string>; body: string }> {
    if (a.kind === 'backchannel_logout') {
      const token = await signLogoutToken(this.ctx, JSON.parse(a.body));
      return {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': USER_AGENT,
          'cache-control': 'no-store',
        },
        body: new URLSearchParams({ logout_token: token }).toString(),
      };
    }
    if (!a.webhook_id || !a.secret_enc) throw new Error('a webhook delivery without its webhook');
    const secret = this.secretOf(a.webhook_id, a.secret_enc);
    const headers = signedHeaders(
      { id: a.id, event: a.event, body: a.body, secret },
      this.ctx.clock.nowSec(),
    );
    return { headers, body: a.body };
  }

  /** Sends a claimed attempt and records its outcome. Used by the loop and by the test route. */
  async process(a: ClaimedAttempt): Promise<AttemptResult> {
    let result: AttemptResult;
    try {
      const { headers, body } = await this.attemptRequest(a);
      const started = performance.now();
      result = await this.client.send(a.url, headers, body);
      this.ctx.metrics.webhookLatency.observe(
        { outcome: result.status },
        (performance.now() - started) / 1000,
      );
    } catch {
      result = { status: 'failed_network', responseCode: null, responseBodyExcerpt: null };
    }
    this.ctx.metrics.webhookAttempts.inc({ outcome: result.status });
    await this.record(a, result);
    return result;
  }

  /**
   * Successes are written in batches: while one batch statement runs, the next one collects, so the
   * batch grows with the load and a quiet worker still writes each result at once.
   */
  private recordSuccess(rec: SuccessRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.successQueue.push({ rec, resolve, reject });
      if (!this.flushing) void this.flushSuccesses();
    });
  }

  private async flushSuccesses(): Promise<void> {
    this.flushing = true;
    try {
      while (this.successQueue.length > 0) {
        const batch = this.successQueue.splice(0, 500);
        try {
          await recordSuccesses(
            this.ctx.db,
            batch.map((b) => b.rec),
          );
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async record(a: ClaimedAttempt, r: AttemptResult): Promise<void> {
    const ctx = this.ctx;
    const now = ctx.clock.now();
    if (r.status === 'succeeded') {
      await this.recordSuccess({
        id: a.id,
        attempt: a.attempt_count,
        at: now,
        code: r.responseCode ?? 0,
        excerpt: r.responseBodyExcerpt ?? '',
      });
      return;
    }
    const schedule = ctx.config.webhookRetrySchedule;
    // Attempt n (1-based) is followed by retry n, at schedule[n-1] seconds, while retries remain.
    if (a.attempt_count <= schedule.length) {
      await recordRetry(ctx.db, {
        id: a.id,
        attempt: a.attempt_count,
        nextAttemptAt: new Date(now.getTime() + schedule[a.attempt_count - 1] * 1000),
        code: r.responseCode,
        excerpt: r.responseBodyExcerpt,
      });
      return;
    }
    await ctx.db.transaction().execute(async (trx) => {
      const failed = await recordFinalFailure(trx, {
        id: a.id,
        attempt: a.attempt_count,
        status: r.status,
        code: r.responseCode,
        excerpt: r.responseBodyExcerpt,
      });
      if (failed?.app_id) return recordLogoutFailure(trx, ctx, a, failed.app_id, r);
      const webhookId = failed?.webhook_id;
      if (!webhookId) return;
      const w = await bumpFailures(trx, webhookId);
      if (w?.enabled && w.consecutive_failures >= defaults.webhookAutoDisableAfter) {
        await autoDisable(trx, webhookId, now);
        await recordMutation(trx, ctx.clock, {
          orgId: w.org_id,
          actorUserId: null,
          action: 'webhook.disabled',
          resourceType: 'webhook',
          resourceId: webhookId,
          metadata: { reason: 'consecutive_failures', consecutiveFailures: w.consecutive_failures },
        });
      }
    });
  }

  /**
   * New deliveries notify on commit (pg_notify in the outbox sink), so the worker sends within
   * milliseconds instead of at the next poll. Polling remains the fallback for retries and for
   * notifications lost while a listener reconnects.
   */
  private async subscribe(): Promise<void> {
    const schema = this.ctx.config.databaseSchema ?? 'public';
    const onNotify = (payload?: string | null) => {
      if (!payload || payload === schema) this.wake();
    };
    const { database, config } = this.ctx;
    try {
      if (database.kind === 'pglite' && database.pglite) {
        const off = await database.pglite.listen(WORKER_CHANNEL, (p) => onNotify(p));
        this.unlisten = async () => off();
      } else if (database.kind === 'postgres' && config.databaseUrl) {
        const client = new pg.Client({
          connectionString: config.databaseUrl,
          application_name: 'gatehouse-webhook-worker',
        });
        let ended = false;
        const reconnect = () => {
          // The poll keeps deliveries moving meanwhile; listen again shortly.
          if (ended || !this.running) return;
          ended = true;
          this.log?.warn('webhook worker: notification connection lost; reconnecting');
          client.end().catch(() => {});
          setTimeout(() => {
            if (this.running) void this.subscribe();
          }, defaults.webhookReconnectDelayMs).unref();
        };
        client.on('error', reconnect);
        client.on('end', reconnect);
        client.on('notification', (n) => onNotify(n.payload));
        await client.connect();
        await client.query(`listen ${WORKER_CHANNEL}`);
        if (!this.running) {
          // Stopped while (re)connecting.
          ended = true;
          await client.end();
          return;
        }
        this.unlisten = async () => {
          ended = true;
          await client.end();
        };
      }
    } catch (err) {
      this.unlisten = null;
      this.log?.warn({ err }, 'webhook worker: cannot listen for notifications; polling until it can');
      // The database may be restarting: listen again later instead of polling for the rest of the run.
      if (this.running && database.kind === 'postgres')
        setTimeout(() => {
          if (this.running && !this.unlisten) void this.subscribe();
        }, 5000).unref();
    }
  }
}

/**
 * A back-channel logout token that exhausted its retries: the audit log of the app's org says so
 * (`app.backchannel_logout.failed`), where an operator reads it; the delivery row keeps the status.
 */
async function recordLogoutFailure(
  trx: Parameters<typeof recordMutation>[0],
  ctx: AppContext,
  a: ClaimedAttempt,
  appId: string,
  r: AttemptResult,
): Promise<void> {
  const claims = JSON.parse(a.body) as { aud?: string; sid?: string };
  await recordMutation(trx, ctx.clock, {
    orgId: a.org_id,
    actorUserId: null,
    action: 'app.backchannel_logout.failed',
    resourceType: 'app',
    resourceId: appId,
    metadata: {
      clientId: claims.aud,
      sid: claims.sid,
      deliveryId: a.id,
      url: a.url,
      status: r.status,
      responseCode: r.responseCode,
      attempts: a.attempt_count,
    },
  });
}
