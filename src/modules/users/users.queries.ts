import type { Selectable } from 'kysely';
import type { ActivityTable, ApiKeysTable, Executor, OAuthLinksTable, UserRow } from '../../db/schema.js';

export type ActivityRow = Selectable<ActivityTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OAuthLinkRow = Selectable<OAuthLinksTable>;

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('username', '=', username)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Whether any account, including one in its deletion grace window, holds the username. */
export async function usernameTaken(db: Executor, username: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
  return !!row;
}

export async function recentActivity(db: Executor, userId: string, limit: number): Promise<ActivityRow[]> {
  return db
    .selectFrom('activity')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function oauthLinksOf(db: Executor, userId: string): Promise<OAuthLinkRow[]> {
  return db
    .selectFrom('oauth_links')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** A live user's profile claims source (for the issuer's tokens and /userinfo), with the uploaded picture's key. */
export async function findLiveUserProfile(db: Executor, userId: string) {
  const row = await db
    .selectFrom('users')
    .leftJoin('files', 'files.id', 'users.profile_picture_id')
    .select([
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'users.preferred_language',
      'users.email',
      'users.email_verified',
      'users.external_profile_picture_url',
      'files.file_key',
    ])
    .where('users.id', '=', userId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** Whether the user exists and is not deleted (nor in the deletion window). */
export async function isUserLive(db: Executor, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select(['id'])
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row;
}

/** The id of the account (deleted ones included) with this id or this (lower-cased) username. */
export async function findAnyUserIdByIdOrUsername(db: Executor, ident: string): Promise<string | undefined> {
  const byId = await db.selectFrom('users').select('id').where('id', '=', ident).executeTakeFirst();
  if (byId) return byId.id;
  const byName = await db
    .selectFrom('users')
    .select('id')
    .where('username', '=', ident.toLowerCase())
    .executeTakeFirst();
  return byName?.id;
}

/** The user holding this wallet address, if any. */
export async function findUserIdByWallet(db: Executor, address: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('user_public_keys')
    .select('user_id')
    .where('address', '=', address)
    .executeTakeFirst();
  return row?.user_id;
}
