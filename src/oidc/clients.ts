import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import type { Tx } from './stores.js';

/** An OAuth client as the issuer sees it: a live app of a live brand of a live org. */
export interface Client {
  appId: string;
  clientId: string;
  orgId: string;
  /** The org's slug: access tokens carry it as `org` (DESIGN.md §3 "Brand audiences"). */
  orgSlug: string;
  brandId: string;
  brandSlug: string;
  brandName: string;
  name: string;
  type: string;
  isConfidential: boolean;
  firstParty: boolean;
  redirectUris: string[];
  /** Where /oauth2/logout may return the browser (exact match). */
  postLogoutRedirectUris?: string[];
  /** The app's back-channel logout receiver, or null. */
  backchannelLogoutUri?: string | null;
  allowedGrantTypes: string[];
  allowedScopes: string[];
  /** SHA-256 hex of the client secret; null for public clients. */
  secretHash: string | null;
  /** The gate policy a linked wallet of the user must pass to sign in (DESIGN §3); null for none. */
  requiredGatePolicyId?: string | null;
  /** The brand's scopes bound to a gate policy: granted only to a user whose wallet passes. */
  gatedScopes?: string[];
}

interface Entry {
  client: Client | null;
  loadedAt: number;
  /** The load in flight, so a burst of requests for one client makes one query. */
  pending?: Promise<Client | null>;
}

/**
 * Per-context cache (tests run several apps in one process). The `app` invalidation topic (announced
 * by the apps module) drops an entry at once when the app changes on any instance (the invalidation channel); entries also expire after
 * `clientCacheTtlMs`, a backstop for a notification lost in flight.
 */
const caches = new WeakMap<AppContext, Map<string, Entry>>();

function cacheOf(ctx: AppContext): Map<string, Entry> {
  let cache = caches.get(ctx);
  if (!cache) {
    const created = new Map<string, Entry>();
    cache = created;
    caches.set(ctx, created);
    const unsubscribe = ctx.invalidation.on('app', (clientId) => {
      if (clientId === '*') created.clear();
      else created.delete(clientId);
    });
    ctx.hooks.onClose.push(unsubscribe);
  }
  return cache;
}

/** Drops cached clients (one, or all): for changes the apps module does not announce. */
export function invalidateClient(ctx: AppContext, clientId?: string): void {
  const cache = caches.get(ctx);
  if (!cache) return;
  if (clientId === undefined) cache.clear();
  else cache.delete(clientId);
}

function fetchClient(ctx: AppContext, clientId: string, tx?: Tx): Promise<Client | null> {
  return ctx.stores.clients.find(clientId, tx);
}

/**
 * The enabled app with this client id whose brand and org are live, or null. Cached per instance
 * for `clientCacheTtlMs` (misses too, so unknown client ids cannot hammer the database), except
 * while the invalidation channel is down: then every call reads the database (fail closed).
 */
export async function loadClient(ctx: AppContext, clientId: string, tx?: Tx): Promise<Client | null> {
  if (!clientId || clientId.length > 200) return null;
  const cache = cacheOf(ctx);
  if (!ctx.invalidation.healthy) return fetchClient(ctx, clientId, tx);
  // Inside a transaction a miss is read in it and not shared: another caller must not wait on a read
  // that waits on this transaction, nor keep what it read before the transaction commits.
  if (tx) {
    const hit = cache.get(clientId);
    const now = ctx.clock.nowMs();
    if (hit && !hit.pending && now - hit.loadedAt < defaults.clientCacheTtlMs && now >= hit.loadedAt)
      return hit.client;
    return fetchClient(ctx, clientId, tx);
  }
  const now = ctx.clock.nowMs();
  const hit = cache.get(clientId);
  if (hit) {
    if (hit.pending) return hit.pending;
    if (now - hit.loadedAt < defaults.clientCacheTtlMs && now >= hit.loadedAt) return hit.client;
  }
  if (cache.size >= defaults.clientCacheMaxEntries) cache.clear();
  const entry: Entry = { client: null, loadedAt: now };
  entry.pending = fetchClient(ctx, clientId).then(
    (client) => {
      entry.client = client;
      entry.loadedAt = ctx.clock.nowMs();
      entry.pending = undefined;
      return client;
    },
    (err) => {
      cache.delete(clientId);
      throw err;
    },
  );
  cache.set(clientId, entry);
  return entry.pending;
}
