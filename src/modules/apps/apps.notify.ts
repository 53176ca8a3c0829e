/**
 * Cache-invalidation seam for the issuer: listeners hear the client id of every app whose
 * configuration or state changed (PATCH, rotate-secret, DELETE, its brand deleted), after the change
 * committed. Listeners are per process; another instance learns of the change when its cache entry
 * expires, so a cache in front of `findAppByClientId` should keep entries briefly.
 */
type AppChangeListener = (clientId: string) => void;

const listeners = new Set<AppChangeListener>();

/** Subscribes to app changes; returns the unsubscribe function. */
export function onAppChanged(listener: AppChangeListener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** Tells every listener; a failing listener never fails the request that changed the app. */
export function notifyAppChanged(clientIds: Iterable<string>): void {
  for (const clientId of clientIds) {
    for (const l of listeners) {
      try {
        l(clientId);
      } catch {
        // A cache that could not drop its entry still expires it; the change itself is committed.
      }
    }
  }
}
