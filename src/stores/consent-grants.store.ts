import type { ConsentGrantRow, Db, Executor } from '../db/schema.js';
import type { ConsentStore } from '../oidc/stores.js';

/** The user's grant to an app, found by the app's id or its client id, or null. */
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

/** `consent_grants`: owned here. */
export function consentStore(db: Db): ConsentStore {
  return {
    listOfUser: (userId) =>
      db
        .selectFrom('consent_grants')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('updated_at', 'desc')
        .orderBy('id', 'desc')
        .execute(),
    find: (tx, userId, appId) => findConsentGrant(tx ?? db, userId, appId),
    async insertIfAbsent(tx, row) {
      const inserted = await tx
        .insertInto('consent_grants')
        .values(row)
        .onConflict((oc) => oc.constraint('consent_grants_user_app_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted?.id ?? null;
    },
    lock: (tx, userId, appId) =>
      tx
        .selectFrom('consent_grants')
        .select(['id', 'scopes'])
        .where('user_id', '=', userId)
        .where('app_id', '=', appId)
        .forUpdate()
        .executeTakeFirstOrThrow(),
    async setScopes(tx, id, scopes, now) {
      await tx.updateTable('consent_grants').set({ scopes, updated_at: now }).where('id', '=', id).execute();
    },
    async delete(tx, userId, clientId) {
      const row = await tx
        .deleteFrom('consent_grants')
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
  };
}
