import type { AppContext } from '../../context.js';

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

/** Tells every instance; a failure to reach the others never fails the request that changed the app. */
export async function notifyAppChanged(ctx: AppContext, clientIds: Iterable<string>): Promise<void> {
  await ctx.invalidation.publish('app', clientIds);
}
