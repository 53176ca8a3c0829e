import type { AppContext } from '../context.js';
import { newId } from '../lib/ids.js';
import { loadClient } from './clients.js';
import type { LogoutDelivery, Tx } from './stores.js';

/** One app to tell that a user's session ended. */
export interface SessionApp {
  sessionId: string;
  userId: string;
  clientId: string;
}

/**
 * Queues a back-channel logout token (OpenID Back-Channel Logout 1.0) for each app that has a
 * receiver, in `tx`: the rows commit with the change that ended the session, and the webhook worker
 * sends them after it (at-least-once, retried on the webhook schedule, under its SSRF rules).
 */
export async function queueBackchannelLogout(ctx: AppContext, tx: Tx, apps: SessionApp[]): Promise<void> {
  const rows: LogoutDelivery[] = [];
  for (const a of apps) {
    // Read in `tx`, not through the cache's own read: on the embedded database (one connection,
    // held by `tx`) a cache miss read outside it waited for the transaction that waited for it, and
    // every logout more than clientCacheTtlMs after the app's last use froze the instance.
    const client = await loadClient(ctx, a.clientId, tx);
    if (!client?.backchannelLogoutUri) continue;
    rows.push({
      orgId: client.orgId,
      appId: client.appId,
      url: client.backchannelLogoutUri,
      claims: { aud: client.clientId, sub: a.userId, sid: a.sessionId, jti: newId() },
    });
  }
  if (rows.length > 0) await ctx.stores.logoutDeliveries.enqueue(tx, rows, ctx.clock.now());
}

/** Revokes the refresh and access tokens issued in the sessions and burns their unredeemed codes. */
export async function revokeSessionTokens(ctx: AppContext, tx: Tx, sessionIds: string[]): Promise<void> {
  const now = ctx.clock.now();
  for (const sessionId of sessionIds) await ctx.stores.revocations.revokeFamilies(tx, { sessionId }, now);
}
