import type { AppContext } from '../context.js';
import type { Executor, Trx } from '../db/schema.js';
import { recordMutation } from '../events/outbox.js';
import { newId } from '../lib/ids.js';
import type { ConsentGrantRow } from '../db/schema.js';
import { revokeTokensForGrant } from './revocation.js';

export interface ConsentApp {
  /** The app's id. */
  appId: string;
  clientId: string;
  orgId: string;
}

/**
 * The user's grant to an app, found by the app's id or its client id (the interface names apps by
 * client id; the issuer knows both), or null.
 */
export async function findConsentGrant(
  db: Executor,
  userId: string,
  appId: string,
): Promise<ConsentGrantRow | null> {
  const row = await db
    .selectFrom('consent_grants')
    .selectAll()
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('app_id', '=', appId), eb('client_id', '=', appId)]))
    .executeTakeFirst();
  return row ?? null;
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
  trx: Trx,
  input: { user: { id: string }; app: ConsentApp; scopes: string[] },
): Promise<string[]> {
  const now = ctx.clock.now();
  const scopes = [...new Set(input.scopes)];
  const inserted = await trx
    .insertInto('consent_grants')
    .values({
      id: newId('cg_'),
      user_id: input.user.id,
      app_id: input.app.appId,
      client_id: input.app.clientId,
      org_id: input.app.orgId,
      scopes,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.constraint('consent_grants_user_app_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  let grantId = inserted?.id;
  let newly = scopes;
  if (!inserted) {
    const existing = await trx
      .selectFrom('consent_grants')
      .select(['id', 'scopes'])
      .where('user_id', '=', input.user.id)
      .where('app_id', '=', input.app.appId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    grantId = existing.id;
    const have = new Set(existing.scopes);
    newly = scopes.filter((s) => !have.has(s));
    if (newly.length === 0) return [];
    await trx
      .updateTable('consent_grants')
      .set({ scopes: [...existing.scopes, ...newly], updated_at: now })
      .where('id', '=', existing.id)
      .execute();
  }
  if (newly.length === 0) return [];
  await recordMutation(trx, ctx.clock, {
    orgId: input.app.orgId,
    actorUserId: input.user.id,
    action: 'consent.granted',
    resourceType: 'consent_grant',
    resourceId: grantId!,
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
  trx: Trx,
  input: { userId: string; appId: string; actorUserId: string | null },
): Promise<boolean> {
  const row = await trx
    .deleteFrom('consent_grants')
    .where('user_id', '=', input.userId)
    .where('client_id', '=', input.appId)
    .returningAll()
    .executeTakeFirst();
  if (!row) return false;
  await revokeTokensForGrant(trx, ctx.clock, { userId: input.userId, clientId: row.client_id });
  await recordMutation(trx, ctx.clock, {
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
