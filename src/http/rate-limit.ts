import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
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
 * The interface's rate limits. Counters live in Redis when REDIS_URL is set (shared by every
 * instance), else in this process. If Redis stops answering, each instance falls back to its own
 * in-memory counters (the `insuranceLimiter`) rather than failing requests or letting them all through.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

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
      const points = Math.max(1, Math.round(spec.points * this.multiplier));
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
    const limiter = this.limiter(name, spec);
    try {
      const res = await limiter.consume(key, cost);
      reply?.headers(headersOf(limiter.points, res));
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      const headers = headersOf(limiter.points, e);
      const retryAfter = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      headers['retry-after'] = String(retryAfter);
      throw new ApiError(
        429,
        'rate_limited',
        'rate limit exceeded; retry later',
        { retryAfter, limit: limiter.points, window: spec.duration },
        headers,
      );
    }
  }

  /** Clears a key (for example a device code's pacing after its interval grew). */
  async reset(name: string, key: string, spec: LimitSpec = rateLimits[name as RateLimitName]): Promise<void> {
    if (!this.enabled) return;
    await this.limiter(name, spec).delete(key);
  }

  /**
   * A preHandler that limits a route. `key` returns the bucket (IP, org, client_id, user, webhook…);
   * undefined skips the limit for that request.
   */
  guard(
    name: RateLimitName,
    key: (req: FastifyRequest) => string | undefined,
    spec?: LimitSpec,
  ): preHandlerAsyncHookHandler {
    const self = this;
    return async function rateLimitGuard(req, reply) {
      const k = key(req);
      if (k !== undefined) await self.consume(name, k, reply, spec ?? rateLimits[name]);
    };
  }
}

function headersOf(limit: number, res: RateLimiterRes): Record<string, string> {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, res.remainingPoints)),
    'ratelimit-reset': String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))),
  };
}
