import { sql } from 'kysely';
import type { Db, Executor } from '../db/schema.js';
import { publishInvalidation } from '../events/invalidation.js';
import type { Clock } from '../lib/clock.js';
import type { Encryptor } from '../lib/encryption.js';
import { newSigningKeyRow } from '../oidc/keys.js';
import type { SigningKeyStore } from '../oidc/stores.js';

/** Held while the first key is created, so instances starting at once create one. */
const KEY_CREATION_LOCK = 7417002;

/** `signing_keys`: owned here. */
export function signingKeyStore(db: Executor): SigningKeyStore {
  return {
    list: () => db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').execute(),
    async insert(row) {
      await db
        .insertInto('signing_keys')
        .values({ ...row, public_jwk: JSON.stringify(row.public_jwk) })
        .execute();
    },
    insertScheduled: (row) =>
      db.transaction().execute(async (trx) => {
        await signingKeyStore(trx).insert(row);
        // The keys signing until then are retired at the new key's activation: they stay in the
        // JWKS until their last tokens expire (retiredKeyGrace after it).
        await trx
          .updateTable('signing_keys')
          .set({ retired_at: row.activates_at })
          .where('kid', '!=', row.kid)
          .where('retired_at', 'is', null)
          .execute();
        await publishInvalidation(trx, 'keys', ['*']);
      }),
    withCreationLock: (fn) =>
      db.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${sql.lit(KEY_CREATION_LOCK)})`.execute(conn);
        try {
          return await fn(signingKeyStore(conn));
        } finally {
          await sql`select pg_advisory_unlock(${sql.lit(KEY_CREATION_LOCK)})`.execute(conn);
        }
      }),
  };
}

/**
 * Adds a new active key and retires the previous ones. Retired keys stay in the JWKS until every
 * token they signed has expired (`retiredKeyGrace`).
 */
export async function rotateSigningKey(db: Db, encryptor: Encryptor, clock: Clock): Promise<string> {
  // Made before the transaction opens: no connection waits while the primes are found.
  const row = await newSigningKeyRow(encryptor, clock);
  return db.transaction().execute(async (trx) => {
    await signingKeyStore(trx).insert(row);
    // Every other key is retired now, including one the schedule had set to retire later (a manual
    // rotation during the day a scheduled key waits is usually a leak: the grace starts now).
    const now = clock.now();
    await trx
      .updateTable('signing_keys')
      .set({ retired_at: now })
      .where('kid', '!=', row.kid)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
      .execute();
    // Every instance rereads its key set when this commits (the CLI rotates with no server in
    // process); in the transaction, so no key change goes unannounced.
    await publishInvalidation(trx, 'keys', ['*']);
    return row.kid;
  });
}
