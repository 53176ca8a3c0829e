import type { Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';

/** Tables of migration 0004_signin.sql. */
export interface UserPublicKeysTable {
  id: string;
  user_id: string;
  blockchain: Generated<string>;
  address: string;
  label: string | null;
  is_primary: Generated<boolean>;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface WalletChallengesTable {
  id: string;
  message_hash: string;
  nonce_hash: string;
  brand_id: string;
  address: string;
  purpose: string;
  user_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}

/** The validated authorize request an interaction carries to the redirect back. */
export interface InteractionParams {
  redirectUri: string;
  scopes: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  prompt?: string;
  loginHint?: string;
  provider?: string;
  /** `ui_locales` of the authorize request: the hosted pages' language preference. */
  uiLocales?: string;
  /** Device flow: SHA-256 of the normalised user code being approved (the browser keeps the code). */
  userCodeHash?: string;
}

export interface InteractionsTable {
  id: string;
  kind: 'authorize' | 'device';
  app_id: string;
  client_id: string;
  brand_id: string;
  params: Json<InteractionParams>;
  return_to: string | null;
  user_id: string | null;
  session_id: string | null;
  auth_time: Timestamp | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  completed_at: Timestamp | null;
  /** SHA-256 hex of the browser-binding cookie (migration 0010); null when not bound. */
  binding_hash: string | null;
}

export interface SessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  brand_id: string;
  auth_time: Timestamp;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface ConsentGrantsTable {
  id: string;
  user_id: string;
  app_id: string;
  client_id: string;
  org_id: string;
  scopes: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface Database {
    user_public_keys: UserPublicKeysTable;
    wallet_challenges: WalletChallengesTable;
    interactions: InteractionsTable;
    sessions: SessionsTable;
    consent_grants: ConsentGrantsTable;
  }
}

export type UserPublicKeyRow = Selectable<UserPublicKeysTable>;
export type InteractionRow = Selectable<InteractionsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type ConsentGrantRow = Selectable<ConsentGrantsTable>;
