import type { Selectable } from 'kysely';
import type { Executor, Timestamp, UserRow } from '../../db/types.js';

export interface ActivityTable {
  id: string;
  user_id: string;
  type: string;
  provider: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  /** The first 8 characters of the key, for display. */
  prefix: string;
  /** SHA-256 hex of the whole key; the key itself is never stored. */
  key_hash: string;
  type: string;
  scopes: string[];
  ip_allowlist: string[];
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface OAuthLinksTable {
  id: string;
  user_id: string;
  provider: string;
  external_user_id: string;
  email_address: string | null;
  username: string | null;
  /** Provider tokens, sealed with `ctx.encryptor` (AAD: the link id). */
  access_token_enc: string | null;
  refresh_token_enc: string | null;
  token_expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DeletedIdentitiesTable {
  /** SHA-256 of the identity (`wallet:<address>` or `oauth:<provider>:<externalUserId>`). */
  identity_hash: string;
  user_id: string;
  deleted_at: Timestamp;
}

export interface UsersGraveyardTable {
  id: string;
  deleted_at: Timestamp;
  purged_at: Timestamp;
}

declare module '../../db/types.js' {
  interface Database {
    activity: ActivityTable;
    api_keys: ApiKeysTable;
    oauth_links: OAuthLinksTable;
    deleted_identities: DeletedIdentitiesTable;
    users_graveyard: UsersGraveyardTable;
  }
}

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
