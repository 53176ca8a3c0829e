import type { AppContext } from '../context.js';
import { newId } from '../lib/ids.js';
import { queueBackchannelLogout } from './backchannel.js';
import { revokeGrantTokens } from './revocation.js';
import type { Tx } from './stores.js';

export interface ConsentApp {
  /** The app's id. */
  appId: string;
  clientId: string;
  orgId: string;
}

/** True when the grant already covers every requested scope. */
export function grantCovers(grant: { scopes: string[] } | null, scopes: string[]): boolean {
  if (!grant) return false;
  const have = new Set(grant.scopes);
  return scopes.every((s) => have.has(s));
}

/**
 * Records that the user granted `scopes` to the app: one row per user and app holding the union
 * of everything granted. Returns the scopes that were not granted before; `consent.granted` fires
 * with only those (and not at all when there are none). Concurrent grants serialise on the row.
 */
export async function grantConsent(
  ctx: AppContext,
  trx: Tx,
  input: { user: { id: string }; app: ConsentApp; scopes: string[] },
): Promise<string[]> {
  const now = ctx.clock.now();
  const scopes = [...new Set(input.scopes)];
  const consent = ctx.stores.consent;
  let grantId = await consent.insertIfAbsent(trx, {
    id: newId('cg_'),
    user_id: input.user.id,
    app_id: input.app.appId,
    client_id: input.app.clientId,
    org_id: input.app.orgId,
    scopes,
    created_at: now,
    updated_at: now,
  });
  let newly = scopes;
  if (!grantId) {
    const existing = await consent.lock(trx, input.user.id, input.app.appId);
    grantId = existing.id;
    const have = new Set(existing.scopes);
    newly = scopes.filter((s) => !have.has(s));
    if (newly.length === 0) return [];
    await consent.setScopes(trx, existing.id, [...existing.scopes, ...newly], now);
  }
  if (newly.length === 0) return [];
  await ctx.stores.events.record(trx, {
    orgId: input.app.orgId,
    actorUserId: input.user.id,
    action: 'consent.granted',
    resourceType: 'consent_grant',
    resourceId: grantId,
    metadata: { app: input.app.clientId, scopes: newly },
    events: [
      { type: 'consent.granted', data: { user: input.user.id, app: input.app.clientId, scopes: newly } },
    ],
  });
  return newly;
}

/**
 * Deletes the user's grant to the app (`appId` is the client id, as in the interface's paths) and
 * revokes every token issued under it. Fires `consent.revoked`. False when there was no grant.
 */
export async function revokeConsentGrant(
  ctx: AppContext,
  trx: Tx,
  input: { userId: string; appId: string; actorUserId: string | null },
): Promise<boolean> {
  const row = await ctx.stores.consent.delete(trx, input.userId, input.appId);
  if (!row) return false;
  await revokeGrantTokens(ctx, trx, { userId: input.userId, clientId: row.client_id });
  // The app is told, per session it was signed in through, that those sign-ins are over.
  const sessions = await ctx.stores.sessionClients.takeForClient(trx, input.userId, row.client_id);
  await queueBackchannelLogout(
    ctx,
    trx,
    sessions.map((sessionId) => ({ sessionId, userId: input.userId, clientId: row.client_id })),
  );
  await ctx.stores.events.record(trx, {
    orgId: row.org_id,
    actorUserId: input.actorUserId,
    action: 'consent.revoked',
    resourceType: 'consent_grant',
    resourceId: row.id,
    metadata: { app: row.client_id, user: row.user_id, scopes: row.scopes },
    events: [
      { type: 'consent.revoked', data: { user: row.user_id, app: row.client_id, scopes: row.scopes } },
    ],
  });
  return true;
}

/** The user's grant to an app, by the app's id or its client id, or null. */
export function consentGrantOf(ctx: AppContext, userId: string, appId: string) {
  return ctx.stores.consent.find(undefined, userId, appId);
}
