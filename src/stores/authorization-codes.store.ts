import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/schema.js';
import type { AuthorizationCodeRow, CodeStore } from '../oidc/stores.js';
import { accessTokenFromCte } from './revocations.store.js';
import { sessionClientCtes } from './sessions.store.js';

/** Marks the user's unredeemed codes as used (account deletion). */
export async function burnCodesOfUser(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('user_id', '=', userId)
    .where('consumed_at', 'is', null)
    .execute();
}

/** Marks the unredeemed codes issued in these browser sessions as used (the sessions end). */
export async function burnCodesOfSessions(db: Executor, sessionIds: string[], now: Date): Promise<void> {
  if (sessionIds.length === 0) return;
  await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('session_id', 'in', sessionIds)
    .where('consumed_at', 'is', null)
    .execute();
}

/** Deletes codes that expired before `before`. */
export async function sweepCodes(db: Executor, before: Date): Promise<void> {
  await db.deleteFrom('authorization_codes').where('expires_at', '<', before).execute();
}

/** The insert of a new code (run alone, or composed into the sign-in's statement). */
export function codeInsert(db: Executor, row: AuthorizationCodeRow) {
  return db.insertInto('authorization_codes').values(row);
}

/**
 * A CTE body: the code inserted for the user the CTE `source` yields (`user_id`); nothing when it
 * yields no row (a statement that finds the user as it signs in).
 */
export function codeInsertFor(source: string, c: Omit<AuthorizationCodeRow, 'user_id'>): RawBuilder<unknown> {
  return sql`
    insert into authorization_codes (code_hash, family_id, client_id, user_id, redirect_uri, scopes, nonce,
      code_challenge, auth_time, session_id, expires_at, created_at, consumed_at)
    select ${c.code_hash}, ${c.family_id}, ${c.client_id}, user_id, ${c.redirect_uri}, ${c.scopes}::text[],
      ${c.nonce}::text, ${c.code_challenge}::text, ${c.auth_time}::bigint, ${c.session_id}::text,
      ${c.expires_at}::timestamptz, ${c.created_at}::timestamptz, null
    from ${sql.table(source)}`;
}

/** `authorization_codes`: owned here. */
export function codeStore(db: Executor): CodeStore {
  return {
    async insert(row) {
      await codeInsert(db, row).execute();
    },
    async find(codeHash) {
      const row = await db
        .selectFrom('authorization_codes')
        .selectAll()
        .where('code_hash', '=', codeHash)
        .executeTakeFirst();
      return row ?? null;
    },
    async consumeMatching(codeHash, r, token) {
      const consume = db
        .updateTable('authorization_codes')
        .set({ consumed_at: r.now })
        .where('code_hash', '=', codeHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', r.now)
        .where('client_id', '=', r.clientId)
        .where('redirect_uri', '=', r.redirectUri)
        .where('code_challenge', r.codeChallenge === null ? 'is' : '=', r.codeChallenge)
        .returningAll();
      if (!token) return (await consume.executeTakeFirst()) ?? null;
      // The token step's records ride on the consumption (one statement, one commit): written only
      // when the code is consumed now, from the code's own family, user and session.
      const { rows } = await sql<AuthorizationCodeRow>`
        with consumed as (${consume}),
        ${accessTokenFromCte('consumed', token)},
        ${sessionClientCtes('consumed', r.clientId, r.now)}
        select * from consumed`.execute(db);
      return rows[0] ?? null;
    },
  };
}
