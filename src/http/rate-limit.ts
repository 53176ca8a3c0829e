import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { type RateLimitName, rateLimits } from '../config/defaults.js';
import { ApiError } from './errors.js';

export interface LimitSpec {
  points: number;
  duration: number;
}

/**
 * Fixed windows in this process's memory, synchronous: the window starts at a key's first hit and
 * lasts `duration` (the same semantics as rate-limiter-flexible's memory store, without a promise and
 * a timer per key, which showed as a sixth of a cached discovery reply). Expired windows are dropped
 * by a sweep every minute.
 */
class MemoryWindows {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Takes `cost` points; answers what is left and when the window ends. */
  take(
    key: string,
    points: number,
    durationMs: number,
    cost: number,
  ): { remaining: number; msBeforeNext: number } {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + durationMs };
      this.windows.set(key, w);
    }
    w.count += cost;
    return { remaining: points - w.count, msBeforeNext: w.resetAt - now };
  }

  delete(key: string): void {
    this.windows.delete(key);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
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
  ) {}

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
    const r = this.memory.take(
      `${name}:${spec.points}:${spec.duration}:${key}`,
      limit,
      spec.duration * 1000,
      cost,
    );
    settle(reply, limit, r.remaining, r.msBeforeNext, spec);
  }

  /**
   * Takes one point (or `cost`) for `key`. Sets the RateLimit-* headers on `reply`; throws a 429
   * ApiError with Retry-After when the budget is spent.
   */
  async consume(
    name: RateLimitName | string,
    key: string,
    reply?: FastifyReply,
    spec: LimitSpec = rateLimits[name as RateLimitName],
    cost = 1,
  ): Promise<void> {
    if (!this.enabled) return;
    if (!this.redis) return this.takeMemory(name, key, reply, spec, cost);
    const limiter = this.limiter(name, spec);
    let res: RateLimiterRes;
    let refused = false;
    try {
      res = await limiter.consume(key, cost);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      res = e;
      refused = true;
    }
    settle(reply, limiter.points, refused ? -1 : res.remainingPoints, res.msBeforeNext, spec);
  }

  /** Clears a key (for example a device code's pacing after its interval grew). */
  async reset(name: string, key: string, spec: LimitSpec = rateLimits[name as RateLimitName]): Promise<void> {
    if (!this.enabled) return;
    if (!this.redis) return this.memory.delete(`${name}:${spec.points}:${spec.duration}:${key}`);
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
    return function rateLimitGuard(req, reply, done) {
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
      self.consume(name, k, reply, limit).then(() => done(), done);
    };
  }
}

/** Sets the RateLimit-* headers; throws the 429 (with Retry-After) when `remaining` went below zero. */
function settle(
  reply: FastifyReply | undefined,
  limit: number,
  remaining: number,
  msBeforeNext: number,
  spec: LimitSpec,
): void {
  const headers: Record<string, string> = {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, remaining)),
    'ratelimit-reset': String(Math.max(0, Math.ceil(msBeforeNext / 1000))),
  };
  if (remaining >= 0) {
    reply?.headers(headers);
    return;
  }
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
