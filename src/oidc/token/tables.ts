import type { Timestamp } from '../../db/types.js';

/** Tables of migration 0005_tokens.sql. Every secret column holds a SHA-256 hex hash. */
export interface AuthorizationCodesTable {
  code_hash: string;
  /** The token family this code starts; reuse of the code revokes it. */
  family_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string[];
  nonce: string | null;
  code_challenge: string | null;
  auth_time: number;
  session_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  consumed_at: Timestamp | null;
}

export interface RefreshTokensTable {
  id: string;
  token_hash: string;
  family_id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  auth_time: number;
  session_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  consumed_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface AccessTokensTable {
  jti: string;
  family_id: string;
  client_id: string;
  user_id: string;
  expires_at: Timestamp;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: Timestamp;
  revoked_at: Timestamp;
}

export interface DeviceAuthorizationsTable {
  id: string;
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  scopes: string[];
  status: 'pending' | 'approved' | 'denied';
  user_id: string | null;
  auth_time: number | null;
  poll_interval: number;
  last_polled_at: Timestamp | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  consumed_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface Database {
    authorization_codes: AuthorizationCodesTable;
    refresh_tokens: RefreshTokensTable;
    access_tokens: AccessTokensTable;
    revoked_tokens: RevokedTokensTable;
    device_authorizations: DeviceAuthorizationsTable;
  }
}
