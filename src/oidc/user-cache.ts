import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { BoundedCache } from '../lib/bounded-cache.js';
import type { AccountStore, UserProfileRow } from './stores.js';

type Wallets = Array<{ address: string; isPrimary: boolean }>;

interface UserCaches {
  /** jti → revoked (true or false), until min(exp, TTL). */
  tokens: BoundedCache<boolean>;
  /** user id → live; only live users are kept (a deleted user is not cached). */
  live: BoundedCache<boolean>;
  /** user id → profile; null (no live user) is never kept. */
  profiles: BoundedCache<UserProfileRow | null>;
  wallets: BoundedCache<Wallets>;
  /**
   * Bumped by every invalidation: a read that started before one does not fill the cache with what
   * it read (it may predate the change).
   */
  generation: number;
}

/** Per context (tests run several apps in one process). */
const caches = new WeakMap<AppContext, UserCaches>();

function cachesOf(ctx: AppContext): UserCaches {
  let c = caches.get(ctx);
  if (c) return c;
  const created: UserCaches = {
    tokens: new BoundedCache(defaults.tokenStateCacheMaxEntries),
    live: new BoundedCache(defaults.userCacheMaxEntries),
    profiles: new BoundedCache(defaults.userCacheMaxEntries),
    wallets: new BoundedCache(defaults.userCacheMaxEntries),
    generation: 0,
  };
  c = created;
  caches.set(ctx, created);
  const offToken = ctx.invalidation.on('token', (jti) => {
    created.generation++;
    created.tokens.drop(jti);
  });
  const offUser = ctx.invalidation.on('user', (userId) => {
    created.generation++;
    created.live.drop(userId);
    created.profiles.drop(userId);
    created.wallets.drop(userId);
  });
  ctx.hooks.onClose.push(offToken, offUser);
  return c;
}

/**
 * Reads through `load` unless `cached` has the value. Fills the cache only while the invalidation
 * channel is healthy and no invalidation arrived during the read; `keep` says whether to keep it.
 */
async function readThrough<V>(
  ctx: AppContext,
  cache: BoundedCache<V>,
  key: string,
  ttlMs: number,
  load: () => Promise<V>,
  keep: (v: V) => boolean = () => true,
): Promise<V> {
  if (!ctx.invalidation.healthy) return load();
  const c = cachesOf(ctx);
  const hit = cache.get(key, ctx.clock.nowMs());
  if (hit !== undefined) return hit;
  const generation = c.generation;
  const value = await load();
  if (c.generation === generation && ctx.invalidation.healthy && keep(value))
    cache.set(key, value, ctx.clock.nowMs() + ttlMs);
  return value;
}

/**
 * An access token's state on each use: its jti revoked, its user (null for client-credentials
 * tokens) live. Served from this instance's memory when both are cached; otherwise one query fills
 * both. `exp` (seconds) bounds the token's entry. Revocations (topic `token`) and writes to the user
 * (topic `user`) drop the entries on every instance at once; while the invalidation channel is down
 * every call reads the database (fail closed).
 */
export async function cachedTokenState(
  ctx: AppContext,
  jti: string,
  userId: string | null,
  exp: number,
): Promise<{ revoked: boolean; live: boolean }> {
  const read = () => ctx.stores.revocations.tokenState(jti, userId);
  if (!ctx.invalidation.healthy) return read();
  const c = cachesOf(ctx);
  const now = ctx.clock.nowMs();
  const revoked = c.tokens.get(jti, now);
  const live = userId === null ? true : c.live.get(userId, now);
  if (revoked !== undefined && live !== undefined) return { revoked, live };
  const generation = c.generation;
  const state = await read();
  if (c.generation === generation && ctx.invalidation.healthy) {
    const later = ctx.clock.nowMs();
    c.tokens.set(jti, state.revoked, Math.min(exp * 1000, later + defaults.tokenStateCacheTtlMs));
    if (userId !== null && state.live) c.live.set(userId, true, later + defaults.userCacheTtlMs);
  }
  return state;
}

/**
 * The accounts store with this instance's cache in front of the reads of every authenticated
 * request (liveness, profile claims, wallets): /userinfo, the REST API's token check, the token
 * endpoint. Only live users are cached; every write to their rows invalidates (topic `user`).
 */
export function cachedAccounts(ctx: AppContext, inner: AccountStore): AccountStore {
  const ttl = defaults.userCacheTtlMs;
  return {
    ...inner,
    profile: (userId) =>
      readThrough(
        ctx,
        cachesOf(ctx).profiles,
        userId,
        ttl,
        () => inner.profile(userId),
        (p) => p !== null,
      ),
    isLive: (userId) =>
      readThrough(
        ctx,
        cachesOf(ctx).live,
        userId,
        ttl,
        () => inner.isLive(userId),
        (v) => v,
      ),
    wallets: (userId) => readThrough(ctx, cachesOf(ctx).wallets, userId, ttl, () => inner.wallets(userId)),
  };
}
