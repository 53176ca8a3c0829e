import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { defaults, type RateLimitName, rateLimits } from '../config/defaults.js';
import { ApiError } from './errors.js';
import { networkSourceKey } from './network-source.js';
import { documentGuard } from './route-doc.js';

export interface LimitSpec {
  points: number;
  duration: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/**
 * Fixed windows in this process's memory, synchronous: the window starts at a key's first hit and
 * lasts `duration` (the same semantics as rate-limiter-flexible's memory store, without a promise and
 * a timer per key, which showed as a sixth of a cached discovery reply). One map of keys per limit,
 * found by name without building a string per request. Expired windows are dropped by a sweep every
 * minute.
 */
class MemoryWindows {
  private readonly byName = new Map<string, Array<{ spec: LimitSpec; windows: Map<string, Window> }>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), defaults.rateLimitMemorySweepMs);
    this.sweeper.unref();
  }

  /** The windows of limit `name` with `spec` (a name is almost always used with one spec). */
  private windowsOf(name: string, spec: LimitSpec): Map<string, Window> {
    let specs = this.byName.get(name);
    if (!specs) {
      specs = [];
      this.byName.set(name, specs);
    }
    for (const s of specs)
      if (s.spec === spec || (s.spec.points === spec.points && s.spec.duration === spec.duration))
        return s.windows;
    const windows = new Map<string, Window>();
    specs.push({ spec, windows });
    return windows;
  }

  /** Takes `cost` points of `key` under limit `name`; answers its window after the take. */
  take(name: string, spec: LimitSpec, key: string, cost: number, now: number): Window {
    const windows = this.windowsOf(name, spec);
    let w = windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + spec.duration * 1000 };
      windows.set(key, w);
    }
    w.count += cost;
    return w;
  }

  /** Gives `cost` points back to `key`'s live window (never below zero). */
  giveBack(name: string, spec: LimitSpec, key: string, cost: number, now: number): void {
    const w = this.windowsOf(name, spec).get(key);
    if (w && w.resetAt > now) w.count = Math.max(0, w.count - cost);
  }

  delete(name: string, spec: LimitSpec, key: string): void {
    this.windowsOf(name, spec).delete(key);
  }

  private sweep(): void {
    const now = Date.now();
    for (const specs of this.byName.values())
      for (const { windows } of specs) for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
  }
}

/**
 * The interface's rate limits. Counters live in Redis when REDIS_URL is set (shared by every
 * instance), else in this process. If Redis stops answering, each instance falls back to its own
 * in-memory counters (the `insuranceLimiter`) rather than failing requests or letting them all through.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly memory = new MemoryWindows();

  constructor(
    private readonly multiplier: number,
    private readonly redis?: Redis,
    private readonly prefix = 'gatehouse:',
    private readonly ipv6Prefix = 64,
    /** Told of every refusal (the metrics count them by limit name). */
    private readonly onRefused?: (name: string) => void,
  ) {}

  /**
   * The network-source key of a request (its address per TRUST_PROXY; IPv6 by /RATE_LIMIT_IPV6_PREFIX):
   * the one key every per-IP limit uses.
   */
  source(req: FastifyRequest): string {
    return networkSourceKey(req.ip, this.ipv6Prefix);
  }

  get enabled(): boolean {
    return this.multiplier > 0;
  }

  private limiter(name: string, spec: LimitSpec): RateLimiterAbstract {
    const id = `${name}:${spec.points}:${spec.duration}`;
    let l = this.limiters.get(id);
    if (!l) {
      const points = this.limitOf(spec);
      const memory = new RateLimiterMemory({ points, duration: spec.duration, keyPrefix: name });
      l = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            points,
            duration: spec.duration,
            keyPrefix: `${this.prefix}rl:${name}`,
            insuranceLimiter: memory,
            useRedisPackage: false,
          })
        : memory;
      this.limiters.set(id, l);
    }
    return l;
  }

  private limitOf(spec: LimitSpec): number {
    return Math.max(1, Math.round(spec.points * this.multiplier));
  }

  /** The memory path: synchronous, so a route's guard costs no promise. Throws the 429. */
  private takeMemory(
    name: string,
    key: string,
    reply: FastifyReply | undefined,
    spec: LimitSpec,
    cost: number,
  ): void {
    const limit = this.limitOf(spec);
    const now = Date.now();
    const w = this.memory.take(name, spec, key, cost, now);
    if (w.count > limit) this.onRefused?.(name);
    settle(reply, limit, limit - w.count, w.resetAt - now, spec);
  }

  /**
   * Takes one point (or `cost`) for `key`. Sets the RateLimit-* headers on `reply`; refuses with a
   * 429 ApiError carrying Retry-After when the budget is spent. Without Redis it is synchronous: it
   * returns nothing and throws the 429, so a hot route pays no promise (`await` works either way).
   */
  consume(
    name: RateLimitName | string,
    key: string,
    reply?: FastifyReply,
    spec: LimitSpec = rateLimits[name as RateLimitName],
    cost = 1,
  ): void | Promise<void> {
    if (!this.enabled) return;
    if (!this.redis) return this.takeMemory(name, key, reply, spec, cost);
    return this.consumeRedis(name, key, reply, spec, cost);
  }

  private async consumeRedis(
    name: string,
    key: string,
    reply: FastifyReply | undefined,
    spec: LimitSpec,
    cost: number,
  ): Promise<void> {
    const limiter = this.limiter(name, spec);
    let res: RateLimiterRes;
    let refused = false;
    try {
      res = await limiter.consume(key, cost);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      res = e;
      refused = true;
      this.onRefused?.(name);
    }
    settle(reply, limiter.points, refused ? -1 : res.remainingPoints, res.msBeforeNext, spec);
  }

  /**
   * Spends `cost` from each budget only when every one has room (byte budgets: a refused attempt
   * stores nothing, so it spends nothing, in no budget). On a refusal, what this call took is given
   * back and the first full budget's 429 is thrown. Answers a function giving it all back, for a
   * request that fails after spending.
   */
  async spend(budgets: { name: RateLimitName; key: string }[], cost: number): Promise<() => Promise<void>> {
    const taken: { name: RateLimitName; key: string }[] = [];
    const giveBack = async () => {
      // Best effort: a give-back that fails (Redis gone) only leaves the budget over-counted.
      for (const b of taken.splice(0)) await this.giveBack(b.name, b.key, cost).catch(() => {});
    };
    for (const b of budgets) {
      try {
        await this.consume(b.name, b.key, undefined, undefined, cost);
      } catch (err) {
        // A refusal has counted the cost too (both stores count before they compare).
        if (err instanceof ApiError && err.status === 429) taken.push(b);
        await giveBack();
        throw err;
      }
      if (this.enabled) taken.push(b);
    }
    return giveBack;
  }

  private async giveBack(name: RateLimitName, key: string, cost: number): Promise<void> {
    const spec = rateLimits[name];
    if (!this.redis) return this.memory.giveBack(name, spec, key, cost, Date.now());
    await this.limiter(name, spec).reward(key, cost);
  }

  /** Clears a key (for example a device code's pacing after its interval grew). */
  async reset(name: string, key: string, spec: LimitSpec = rateLimits[name as RateLimitName]): Promise<void> {
    if (!this.enabled) return;
    if (!this.redis) return this.memory.delete(name, spec, key);
    await this.limiter(name, spec).delete(key);
  }

  /**
   * A preHandler that limits a route. `key` returns the bucket (IP, org, client_id, user, webhook…);
   * undefined skips the limit for that request. Callback style: without Redis it never allocates a
   * promise.
   */
  guard(
    name: RateLimitName,
    key: (req: FastifyRequest) => string | undefined,
    spec?: LimitSpec,
  ): preHandlerHookHandler {
    const self = this;
    const limit = spec ?? rateLimits[name];
    const guard: preHandlerHookHandler = function rateLimitGuard(req, reply, done) {
      const k = self.enabled ? key(req) : undefined;
      if (k === undefined) return done();
      if (!self.redis) {
        try {
          self.takeMemory(name, k, reply, limit, 1);
        } catch (err) {
          return done(err as Error);
        }
        return done();
      }
      self.consumeRedis(name, k, reply, limit, 1).then(() => done(), done);
    };
    return documentGuard(guard, { kind: 'rateLimit', name, points: limit.points, duration: limit.duration });
  }
}

/**
 * Sets the RateLimit-* headers on `reply` when given; throws the 429 (with them and Retry-After) when
 * `remaining` went below zero.
 */
function settle(
  reply: FastifyReply | undefined,
  limit: number,
  remaining: number,
  msBeforeNext: number,
  spec: LimitSpec,
): void {
  if (remaining >= 0) {
    if (reply) reply.headers(rateLimitHeaders(limit, remaining, msBeforeNext));
    return;
  }
  const headers = rateLimitHeaders(limit, 0, msBeforeNext);
  const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
  headers['retry-after'] = String(retryAfter);
  throw new ApiError(
    429,
    'rate_limited',
    'rate limit exceeded; retry later',
    { retryAfter, limit, window: spec.duration },
    headers,
  );
}

function rateLimitHeaders(limit: number, remaining: number, msBeforeNext: number): Record<string, string> {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, remaining)),
    'ratelimit-reset': String(Math.max(0, Math.ceil(msBeforeNext / 1000))),
  };
}
