import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';

/**
 * Cache-invalidation seam for the issuer: listeners hear the client id of every app whose
 * configuration or state changed (PATCH, rotate-secret, DELETE, its brand or org deleted), after the
 * change committed, on this instance at once and on every other instance through the invalidation
 * channel (src/events/invalidation.ts).
 */
type AppChangeListener = (clientId: string) => void;

/** Subscribes to app changes (`*`: every app); returns the unsubscribe function. */
export function onAppChanged(ctx: AppContext, listener: AppChangeListener): () => void {
  return ctx.invalidation.on('app', listener);
}

/**
 * Inside the transaction that changed the apps: every instance hears of it when (and only if) it
 * commits, so no crash or failed statement after the commit can leave another instance stale. A
 * failure to queue the notification fails the change. Call `appChangeCommitted` after the commit.
 */
export async function notifyAppChanged(
  ctx: AppContext,
  trx: Executor,
  clientIds: Iterable<string>,
): Promise<void> {
  await ctx.invalidation.publish('app', clientIds, trx);
}

/** After the commit: this instance drops the entries (it skips its own notification). */
export function appChangeCommitted(ctx: AppContext, clientIds: Iterable<string>): void {
  ctx.invalidation.applied('app', clientIds);
}
