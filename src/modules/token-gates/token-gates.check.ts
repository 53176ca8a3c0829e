import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Executor, TokenGateKind } from '../../db/schema.js';
import { invalidateEverywhere } from '../../events/invalidation.js';
import { ApiError, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { SolanaRpc, SolanaRpcTimeoutError } from '../../solana/rpc.js';
import type { CheckResult } from './token-gates.schemas.js';
import { findGateForCheck } from './token-gates.queries.js';
import { type GateTarget, HoldingsReader, holdingKey } from './holdings.js';

/** A wallet's holding of one mint as last read from the chain. */
export interface BalanceEntry {
  walletFound: boolean;
  amount: bigint;
  /** ctx.clock milliseconds when it was read: the answer's `Age`, and its expiry. */
  fetchedAt: number;
}

/**
 * Where balances are cached, per (mint, wallet): Redis when configured (shared by instances), else
 * this process.
 */
export interface BalanceCache {
  /** Synchronous where the store allows (memory), so that a cached check awaits nothing. */
  get(mint: string, wallet: string): BalanceEntry | undefined | Promise<BalanceEntry | undefined>;
  set(mint: string, wallet: string, entry: BalanceEntry): Promise<void>;
}

/**
 * At most `max` balances in this process, by wallet and then mint: a lookup reuses the strings it
 * was given (already hashed by the time a check gets here) instead of joining them into a new key on
 * every request. Wallets are kept in the order their balances were last read from the chain; every
 * entry lives the same TTL, so that is roughly the order of expiry, and past `max` the wallets read
 * longest ago are dropped first (a hit needs no reordering). Expiry follows the injected clock, not
 * timers: entries older than the TTL are dropped when read.
 */
export class MemoryBalanceCache implements BalanceCache {
  private readonly byWallet = new Map<string, Map<string, BalanceEntry>>();
  private entries = 0;
  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  /** Balances held (expired ones included until they are read or pushed out). */
  get size(): number {
    return this.entries;
  }

  get(mint: string, wallet: string): BalanceEntry | undefined {
    const mints = this.byWallet.get(wallet);
    const e = mints?.get(mint);
    if (!e) return undefined;
    if (this.clock.nowMs() - e.fetchedAt < this.ttlMs) return e;
    this.drop(wallet, mints as Map<string, BalanceEntry>, mint);
    return undefined;
  }

  async set(mint: string, wallet: string, entry: BalanceEntry): Promise<void> {
    let mints = this.byWallet.get(wallet);
    if (mints) this.byWallet.delete(wallet);
    else mints = new Map();
    this.byWallet.set(wallet, mints);
    if (!mints.has(mint)) this.entries++;
    mints.set(mint, entry);
    while (this.entries > this.max) {
      const [oldest, held] = this.byWallet.entries().next().value as [string, Map<string, BalanceEntry>];
      this.byWallet.delete(oldest);
      this.entries -= held.size;
    }
  }

  private drop(wallet: string, mints: Map<string, BalanceEntry>, mint: string): void {
    mints.delete(mint);
    this.entries--;
    if (mints.size === 0) this.byWallet.delete(wallet);
  }
}

/**
 * Balances in Redis as `fetchedAt|found|amount`, with a Redis expiry as a backstop; validity is
 * decided by the injected clock like the memory cache. A Redis failure reads as a miss (the chain is
 * asked) and a failed write is dropped: the cache never turns into an error or a wrong answer.
 */
export class RedisBalanceCache implements BalanceCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  async get(mint: string, wallet: string): Promise<BalanceEntry | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.get(`${this.prefix}${mint}:${wallet}`);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'token-gate balance cache read failed');
      return undefined;
    }
    if (!raw) return undefined;
    const m = /^(\d+)\|([01])\|(\d+)$/.exec(raw);
    if (!m) return undefined;
    const fetchedAt = Number(m[1]);
    if (this.clock.nowMs() - fetchedAt >= this.ttlMs) return undefined;
    return { fetchedAt, walletFound: m[2] === '1', amount: BigInt(m[3]) };
  }

  async set(mint: string, wallet: string, e: BalanceEntry): Promise<void> {
    try {
      await this.redis.set(
        `${this.prefix}${mint}:${wallet}`,
        `${e.fetchedAt}|${e.walletFound ? 1 : 0}|${e.amount}`,
        'PX',
        this.ttlMs,
      );
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'token-gate balance cache write failed');
    }
  }
}

/** A set that forgets its oldest member past `max` (addresses already found valid, on the hot path). */
export class BoundedSet {
  private readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  has(value: string): boolean {
    return this.set.has(value);
  }
  add(value: string): void {
    this.set.add(value);
    if (this.set.size > this.max) this.set.delete(this.set.values().next().value as string);
  }
}

interface CachedGate {
  id: string;
  orgId: string;
  enabled: boolean;
  kind: TokenGateKind;
  mintAddress: string;
  /** The balance cache key of its kind and mint (holdingKey). */
  holdingKey: string;
  minHoldings: bigint;
}

/**
 * The public check's view of gates, keyed by (gate id, org slug) and kept `tokenGateLookupTtl`
 * seconds, misses included (random ids cannot each cost a query). A write on any instance
 * invalidates at once (the invalidation channel); while that channel is down nothing is served from
 * here (fail closed).
 */
class GateLookupCache {
  private readonly byGate = new Map<string, Map<string, { gate: CachedGate | null; expiresAt: number }>>();
  /** Bumped by every invalidation so that a lookup racing with a write does not cache the old row. */
  private generation = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  /** The cached gate (or cached miss, null); undefined when it must be read. */
  peek(orgSlug: string, gateId: string): CachedGate | null | undefined {
    if (!this.ctx.invalidation.healthy) return undefined;
    const hit = this.byGate.get(gateId)?.get(orgSlug);
    return hit && hit.expiresAt > this.ctx.clock.nowMs() ? hit.gate : undefined;
  }

  async find(orgSlug: string, gateId: string): Promise<CachedGate | null> {
    const cached = this.peek(orgSlug, gateId);
    if (cached !== undefined) return cached;
    const now = this.ctx.clock.nowMs();
    const generation = this.generation;
    const row = await findGateForCheck(this.ctx.db, orgSlug, gateId);
    const gate: CachedGate | null = row
      ? {
          id: row.id,
          orgId: row.orgId,
          enabled: row.enabled,
          kind: row.kind,
          mintAddress: row.mintAddress,
          holdingKey: holdingKey(row),
          minHoldings: BigInt(row.minHoldings),
        }
      : null;
    if (generation === this.generation) {
      let bySlug = this.byGate.get(gateId);
      if (!bySlug) {
        if (this.byGate.size >= this.max) this.byGate.delete(this.byGate.keys().next().value as string);
        bySlug = new Map();
        this.byGate.set(gateId, bySlug);
      }
      bySlug.set(orgSlug, { gate, expiresAt: now + this.ttlMs });
    }
    return gate;
  }

  invalidateGate(gateId: string): void {
    this.generation++;
    if (gateId === '*') this.byGate.clear();
    else this.byGate.delete(gateId);
  }

  invalidateOrg(orgId: string): void {
    this.generation++;
    if (orgId === '*') {
      this.byGate.clear();
      return;
    }
    for (const [gateId, bySlug] of this.byGate) {
      for (const e of bySlug.values()) if (e.gate?.orgId === orgId) this.byGate.delete(gateId);
    }
  }
}

/** A check's answer, and its age in whole seconds when it came from the balance cache. */
export interface CheckAnswer {
  result: CheckResult;
  ageSeconds?: number;
}

const GATE_ID = /^gate_[A-Za-z0-9]{1,64}$/;
const DISABLED: CheckResult = { hasAccess: false, balance: null, reason: 'gateDisabled' };
const NOT_FOUND: CheckResult = { hasAccess: false, balance: null, reason: 'walletNotFound' };

const byContext = new WeakMap<AppContext, GateChecker>();

/**
 * Inside the transaction that writes a gate: every instance drops its cached lookups of it when the
 * write commits. Call `gateWriteCommitted` after the commit.
 */
export async function invalidateGateLookups(ctx: AppContext, trx: Executor, gateId: string): Promise<void> {
  await ctx.invalidation.publish('gate', [gateId], trx);
}

/** After the commit: this instance drops them (it skips its own notification). */
export function gateWriteCommitted(ctx: AppContext, gateId: string): void {
  ctx.invalidation.applied('gate', [gateId]);
}

/** Drops cached lookups of an org's gates in this process now and on every instance when `trx` commits. */
export async function invalidateOrgGateLookups(trx: Executor, orgId: string): Promise<void> {
  await invalidateEverywhere(trx, 'gateOrg', [orgId]);
}

/** The checker serving `ctx`'s app (tests use it to inject a short RPC timeout). */
export function gateCheckerOf(ctx: AppContext): GateChecker | undefined {
  return byContext.get(ctx);
}

/**
 * Answers the public check: gate lookup (cached), balance (cached per wallet and mint), one RPC
 * exchange at a time per (wallet, mint) in this process however many checks wait for it.
 */
export class GateChecker {
  readonly rpc: SolanaRpc;
  readonly holdings: HoldingsReader;
  readonly gates: GateLookupCache;
  readonly balances: BalanceCache;
  private readonly inflight = new Map<string, Promise<BalanceEntry>>();
  /**
   * Chain reads started, checks that joined a read already under way instead of starting one, and
   * checks answered from the balance cache (plain counts: the metrics read them at scrape time).
   */
  readonly stats = { reads: 0, joined: 0, hits: 0 };
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: FastifyBaseLogger,
  ) {
    this.rpc = new SolanaRpc({ url: ctx.config.solanaRpcUrl, timeoutMs: defaults.solanaRpcTimeoutMs });
    this.holdings = new HoldingsReader(this.rpc);
    this.gates = new GateLookupCache(
      ctx,
      defaults.tokenGateLookupTtl * 1000,
      defaults.tokenGateLookupMaxEntries,
    );
    const ttlMs = defaults.tokenGateCacheTtl * 1000;
    this.balances = ctx.redis
      ? new RedisBalanceCache(ctx.redis, `${ctx.config.redisPrefix}tg:bal:`, ctx.clock, ttlMs, log)
      : new MemoryBalanceCache(ctx.clock, ttlMs, defaults.tokenGateCacheMaxEntries);
    byContext.set(ctx, this);
    this.unsubscribe = [
      ctx.invalidation.on('gate', (id) => this.gates.invalidateGate(id)),
      ctx.invalidation.on('gateOrg', (id) => this.gates.invalidateOrg(id)),
    ];
    const stats = this.stats;
    ctx.metrics.sources.gateChecks = () => ({ hit: stats.hits, miss: stats.reads + stats.joined });
  }

  close(): void {
    for (const off of this.unsubscribe) off();
    byContext.delete(this.ctx);
  }

  /**
   * The answer when this process can give it without waiting: the gate's lookup is cached and the
   * balance is in the memory cache (or the gate is disabled or unknown, which throws the 404).
   * Undefined when the gate must be read, the balance is in Redis or must come from the chain: then
   * call `check`. `walletAddress` must already be a valid address. (Only ids of the right form are
   * ever looked up, so a cached lookup needs no check of the form.)
   */
  cached(orgSlug: string, gateId: string, walletAddress: string): CheckAnswer | undefined {
    const gate = this.gates.peek(orgSlug, gateId);
    if (gate === undefined) return undefined;
    if (gate === null) throw notFound('token gate');
    if (!gate.enabled) return { result: DISABLED };
    const entry = this.balances.get(gate.holdingKey, walletAddress);
    if (entry === undefined || entry instanceof Promise) return undefined;
    this.stats.hits++;
    return { result: decide(entry, gate.minHoldings), ageSeconds: this.ageOf(entry) };
  }

  /**
   * The check's answer and, when it came from the cache, its age in whole seconds. `walletAddress`
   * must already be a valid address. Throws 404 for an unknown gate (or wrong or deleted org), 502
   * when the RPC node fails, 504 when it times out.
   */
  async check(
    orgSlug: string,
    gateId: string,
    walletAddress: string,
    refresh: boolean,
  ): Promise<CheckAnswer> {
    if (!GATE_ID.test(gateId)) throw notFound('token gate');
    const gate = this.gates.peek(orgSlug, gateId) ?? (await this.gates.find(orgSlug, gateId));
    if (!gate) throw notFound('token gate');
    if (!gate.enabled) return { result: DISABLED };
    let ageSeconds: number | undefined;
    let entry = refresh ? undefined : this.balances.get(gate.holdingKey, walletAddress);
    if (entry instanceof Promise) entry = await entry;
    if (entry) {
      this.stats.hits++;
      ageSeconds = this.ageOf(entry);
    } else entry = await this.fetch(walletAddress, gate);
    return { result: decide(entry, gate.minHoldings), ageSeconds };
  }

  private ageOf(entry: BalanceEntry): number {
    return Math.max(0, Math.floor((this.ctx.clock.nowMs() - entry.fetchedAt) / 1000));
  }

  /**
   * Reads the chain once per (wallet, mint) however many checks ask at the same time, and refreshes
   * the cache. A refresh that finds a read already under way joins it: that read is an on-chain
   * lookup begun at most one RPC round trip earlier, not a cached answer.
   */
  private fetch(wallet: string, gate: GateTarget & { holdingKey: string }): Promise<BalanceEntry> {
    const key = `${gate.holdingKey}:${wallet}`;
    let p = this.inflight.get(key);
    if (p) {
      this.stats.joined++;
      return p;
    }
    this.stats.reads++;
    p = this.read(wallet, gate).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /**
   * The bulk check: one answer per (wallet, gate), wallet-major in input order. Balances come from
   * the same cache and the same single-flight as the single check; what is missing is read in one
   * batch (HoldingsReader.readMany). Throws 404 for an unknown gate, 502/504 when the RPC fails.
   */
  async checkMany(orgSlug: string, gateIds: string[], wallets: string[]): Promise<CheckResult[]> {
    const gates = new Map<string, CachedGate>();
    for (const id of new Set(gateIds)) {
      const gate = GATE_ID.test(id)
        ? (this.gates.peek(orgSlug, id) ?? (await this.gates.find(orgSlug, id)))
        : null;
      if (!gate) throw notFound('token gate');
      gates.set(id, gate);
    }
    const targets = new Map<string, CachedGate>();
    for (const g of gates.values()) if (g.enabled) targets.set(g.holdingKey, g);
    const entries = await this.entriesFor([...new Set(wallets)], [...targets.values()]);
    return wallets.flatMap((wallet) =>
      gateIds.map((id) => {
        const gate = gates.get(id) as CachedGate;
        if (!gate.enabled) return DISABLED;
        return decide(entries.get(`${gate.holdingKey}:${wallet}`) as BalanceEntry, gate.minHoldings);
      }),
    );
  }

  /** Every (target, wallet) balance: cached, joined to a read under way, or read now in one batch. */
  private async entriesFor(wallets: string[], targets: CachedGate[]): Promise<Map<string, BalanceEntry>> {
    const found = new Map<string, BalanceEntry | Promise<BalanceEntry>>();
    const missingWallets = new Set<string>();
    const missingTargets = new Map<string, CachedGate>();
    for (const wallet of wallets)
      for (const t of targets) {
        const key = `${t.holdingKey}:${wallet}`;
        let e: BalanceEntry | Promise<BalanceEntry | undefined> | undefined = this.balances.get(
          t.holdingKey,
          wallet,
        );
        if (e instanceof Promise) e = await e;
        if (e) {
          this.stats.hits++;
          found.set(key, e);
        } else if (this.inflight.has(key)) {
          this.stats.joined++;
          found.set(key, this.inflight.get(key) as Promise<BalanceEntry>);
        } else {
          missingWallets.add(wallet);
          missingTargets.set(t.holdingKey, t);
        }
      }
    if (missingWallets.size > 0) this.readBatch([...missingWallets], [...missingTargets.values()], found);
    const out = new Map<string, BalanceEntry>();
    for (const [key, e] of found) out.set(key, await e);
    return out;
  }

  /** Reads the missing pairs in one batch, registering each as in flight so single checks join it. */
  private readBatch(
    wallets: string[],
    targets: CachedGate[],
    found: Map<string, BalanceEntry | Promise<BalanceEntry>>,
  ): void {
    this.stats.reads++;
    const batch = this.timed(() => this.holdings.readMany(wallets, targets));
    for (const wallet of wallets)
      for (const t of targets) {
        const key = `${t.holdingKey}:${wallet}`;
        if (found.has(key)) continue;
        const p = batch
          .then(async (all) => {
            const h = all.get(wallet)?.get(t.holdingKey) ?? { walletFound: false, amount: 0n };
            const entry: BalanceEntry = { ...h, fetchedAt: this.ctx.clock.nowMs() };
            await this.balances.set(t.holdingKey, wallet, entry);
            return entry;
          })
          .finally(() => this.inflight.delete(key));
        p.catch(() => {});
        this.inflight.set(key, p);
        found.set(key, p);
      }
  }

  /** Runs an RPC exchange with the latency metric, turning its failure into 502 / 504. */
  private async timed<T>(fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const out = await fn();
      this.ctx.metrics.rpcLatency.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      return out;
    } catch (err) {
      const outcome = err instanceof SolanaRpcTimeoutError ? 'timeout' : 'error';
      this.ctx.metrics.rpcLatency.observe({ outcome }, (performance.now() - started) / 1000);
      this.log.warn({ err: (err as Error).message }, 'token-gate balance lookup failed');
      if (err instanceof SolanaRpcTimeoutError)
        throw new ApiError(504, 'gateway_timeout', 'the Solana RPC node did not answer in time');
      throw new ApiError(502, 'bad_gateway', 'the Solana RPC node failed to answer');
    }
  }

  private async read(wallet: string, gate: GateTarget & { holdingKey: string }): Promise<BalanceEntry> {
    const balance = await this.timed(() => this.holdings.readOne(wallet, gate));
    const entry: BalanceEntry = {
      walletFound: balance.walletFound,
      amount: balance.amount,
      fetchedAt: this.ctx.clock.nowMs(),
    };
    await this.balances.set(gate.holdingKey, wallet, entry);
    return entry;
  }
}

/**
 * The check's body, written directly: every part is a boolean, digits or one of three fixed words,
 * so nothing needs escaping, and the hot path skips the generic serializer (as discovery does).
 */
export function serializeCheckResult(r: CheckResult): string {
  const balance = r.balance === null ? 'null' : `"${r.balance}"`;
  const reason = r.reason === null ? 'null' : `"${r.reason}"`;
  return `{"hasAccess":${r.hasAccess},"balance":${balance},"reason":${reason}}`;
}

/** walletNotFound never grants access, even with minHoldings 0: the chain does not know the address. */
function decide(entry: BalanceEntry, minHoldings: bigint): CheckResult {
  if (!entry.walletFound) return NOT_FOUND;
  const balance = entry.amount.toString();
  return entry.amount >= minHoldings
    ? { hasAccess: true, balance, reason: null }
    : { hasAccess: false, balance, reason: 'insufficientBalance' };
}
