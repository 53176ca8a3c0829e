import type { ColumnType, Generated, Insertable, Selectable, Transaction, Kysely } from 'kysely';

/** A timestamptz column: Date when read, Date or ISO string when written. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Json<T = unknown> = ColumnType<T, string, string>;

export interface UsersTable {
  id: string;
  username: string | null;
  first_name: string | null;
  last_name: string | null;
  preferred_language: string | null;
  phone_country_code: string | null;
  phone_number: string | null;
  profile_picture_id: string | null;
  external_profile_picture_url: string | null;
  email: string | null;
  email_verified: Generated<boolean>;
  last_seen: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set when the account enters its deletion grace window. */
  deleted_at: Timestamp | null;
}

export interface FilesTable {
  id: string;
  file_key: string;
  content_type: string;
  bytes: number;
  data: Buffer;
  owner_user_id: string | null;
  created_at: Timestamp;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: Json<Record<string, unknown>>;
  private_key_enc: string;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}

export interface SystemPermissionsTable {
  user_id: string;
  permission: string;
  granted_at: Timestamp;
}

export interface OrgsTable {
  id: string;
  name: string;
  slug: string;
  /** Holds the slug while the org is active or its slug is reserved; the unique constraint is on it. */
  slug_claim: string | null;
  description: string | null;
  icon_file_id: string | null;
  created_by: string;
  payment_product_id: string | null;
  payment_customer_id: string | null;
  /** Audit retention tier: identity (30 d), brand (90 d), federation (1 y), authority (unlimited). */
  tier: Generated<string>;
  is_system: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface RolesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  /** 'owner' | 'admin' | 'member' for the built-in roles, null for custom roles. */
  built_in: string | null;
  permissions: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  joined_at: Timestamp;
  disabled_at: Timestamp | null;
}

export interface MemberRolesTable {
  org_id: string;
  user_id: string;
  role_id: string;
  assigned_at: Timestamp;
}

export interface BrandsTable {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  oauth_callback_id: string;
  logo_file_id: string | null;
  primary_color: string | null;
  support_email: string | null;
  privacy_policy_url: string | null;
  terms_url: string | null;
  provider_order: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface AppsTable {
  id: string;
  org_id: string;
  brand_id: string;
  client_id: string;
  /** SHA-256 hex of the client secret; null for public clients. */
  client_secret_hash: string | null;
  name: string;
  type: string;
  is_confidential: boolean;
  redirect_uris: string[];
  allowed_grant_types: string[];
  allowed_scopes: string[];
  enabled: boolean;
  /** First-party apps (the console) skip the consent screen. */
  first_party: Generated<boolean>;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface AuditLogTable {
  id: string;
  org_id: string;
  actor_user_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string;
  metadata: Json<Record<string, unknown>> | null;
  timestamp: Timestamp;
}

export interface EventsTable {
  id: string;
  org_id: string;
  type: string;
  actor_user_id: string | null;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/**
 * The whole schema. Modules add their tables by augmenting this interface:
 *   declare module '../../db/types.js' { interface Database { webhooks: WebhooksTable } }
 */
export interface Database {
  users: UsersTable;
  files: FilesTable;
  signing_keys: SigningKeysTable;
  system_permissions: SystemPermissionsTable;
  orgs: OrgsTable;
  roles: RolesTable;
  org_members: OrgMembersTable;
  member_roles: MemberRolesTable;
  brands: BrandsTable;
  apps: AppsTable;
  audit_log: AuditLogTable;
  events: EventsTable;
}

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either the pool or an open transaction: query functions take this so services decide the boundary. */
export type Executor = Kysely<Database>;

export type UserRow = Selectable<UsersTable>;
export type OrgRow = Selectable<OrgsTable>;
export type BrandRow = Selectable<BrandsTable>;
export type AppRow = Selectable<AppsTable>;
export type NewUser = Insertable<UsersTable>;
