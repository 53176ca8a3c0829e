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
  /** From when a scheduled key signs (published before); null: at once (migration 0019). */
  activates_at: Timestamp | null;
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
  /** Where /oauth2/logout may send the browser back to (exact match; migration 0016). */
  post_logout_redirect_uris: Generated<string[]>;
  /** OpenID Back-Channel Logout 1.0 receiver; null when the app has none. */
  backchannel_logout_uri: Generated<string | null>;
  /** Migration 0017: the gate policy a user's linked wallet must pass to sign in (DESIGN §3). */
  required_gate_policy_id: Generated<string | null>;
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

/** Counts of an org's audit entries per closed UTC day (0017_audit_log_daily.sql). */
export interface AuditLogDailyTable {
  org_id: string;
  /** 'all' (value ''), 'action', 'actor' or 'type'. */
  dim: string;
  value: string;
  /** The UTC midnight that starts the day. */
  day: Timestamp;
  /** bigint: a string when read. */
  n: ColumnType<string, number | string, number | string>;
}

/** Counts of an org's audit entries per closed UTC hour (0020_audit_log_hourly.sql). */
export interface AuditLogHourlyTable {
  org_id: string;
  /** 'all' (value ''), 'action', 'actor' or 'type'. */
  dim: string;
  value: string;
  /** The start of the hour. */
  hour: Timestamp;
  /** bigint: a string when read. */
  n: ColumnType<string, number | string, number | string>;
}

/**
 * Every day of the org before `rolled_until` has its counts in audit_log_daily; every hour before
 * `hours_until` (null: none yet) in audit_log_hourly.
 */
export interface AuditLogRollupsTable {
  org_id: string;
  rolled_until: Timestamp;
  hours_until: Timestamp | null;
}

export interface EventsTable {
  id: string;
  org_id: string;
  type: string;
  actor_user_id: string | null;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

// users.queries.ts
export interface ActivityTable {
  id: string;
  user_id: string;
  type: string;
  provider: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: Timestamp;
}

// users.queries.ts
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

// users.queries.ts
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
  /** The brand whose credentials issued the link's provider tokens (revocation uses them). */
  brand_id: string | null;
}

// users.queries.ts
export interface DeletedIdentitiesTable {
  /** SHA-256 of the identity (`wallet:<address>` or `oauth:<provider>:<externalUserId>`). */
  identity_hash: string;
  user_id: string;
  deleted_at: Timestamp;
}

// users.queries.ts
export interface UsersGraveyardTable {
  id: string;
  deleted_at: Timestamp;
  purged_at: Timestamp;
}

// connections.queries.ts
export interface ConnectionsTable {
  id: string;
  org_id: string;
  brand_id: string;
  type: string;
  enabled: boolean;
  /** Encrypted JSON ProviderConfig (AAD `connection:<brand id>:<type>`); never selected for responses. */
  config_enc: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

// scopes.queries.ts
export interface BrandScopesTable {
  id: string;
  org_id: string;
  brand_id: string;
  /** Immutable: it appears in token claims. */
  name: string;
  /** Shown on the consent screen. */
  description: string;
  /** Migration 0017: granted only while a linked wallet passes this gate policy (DESIGN §3). */
  gate_policy_id: Generated<string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

// webhooks.queries.ts
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed_timeout' | 'failed_status' | 'failed_network';
export interface WebhooksTable {
  id: string;
  org_id: string;
  url: string;
  events: string[];
  events_key: string;
  secret_enc: string;
  enabled: boolean;
  consecutive_failures: number;
  last_delivered_at: Timestamp | null;
  disabled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

// webhooks.queries.ts
export interface WebhookDeliveriesTable {
  id: string;
  /** Null for a back-channel logout delivery (kind `backchannel_logout`, migration 0016). */
  webhook_id: string | null;
  kind: Generated<'webhook' | 'backchannel_logout'>;
  /** The app a back-channel logout token goes to. */
  app_id: Generated<string | null>;
  org_id: string;
  event_id: string | null;
  event: string;
  url: string;
  body: string;
  status: DeliveryStatus;
  response_code: number | null;
  response_body_excerpt: string | null;
  attempt_count: number;
  queued_at: Timestamp;
  delivered_at: Timestamp | null;
  next_attempt_at: Timestamp | null;
  locked_until: Timestamp | null;
  replay_of: string | null;
}

// invitations.queries.ts
export interface OrgInvitationsTable {
  id: string;
  org_id: string;
  token_hash: string;
  role_ids: string[];
  created_by: string;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
  revoked_at: Date | null;
}

// token-gates.queries.ts
export interface TokenGatesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  mint_address: string;
  /** Canonical decimal string (no leading zeros); compared as a BigInt. */
  min_holdings: string;
  enabled: boolean;
  /** 'token' | 'collection' | 'sol' (migration 0015; existing gates are 'token'). */
  kind: Generated<TokenGateKind>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type TokenGateKind = 'token' | 'collection' | 'sol';

/** A gate policy: a rule over the org's gates (DESIGN §3, issue 21). `rule` is the JSON rule tree. */
export interface GatePoliciesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  rule: Json<GateRuleJson>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A policy's rule as stored (validated by the gate-policies service before it is written). */
export type GateRuleJson =
  | { gate: string }
  | { all: GateRuleJson[] }
  | { any: GateRuleJson[] }
  | { atLeast: number; of: GateRuleJson[] }
  | { not: GateRuleJson };

/** The gates a policy's rule names: deleting a gate in use fails on gate_policy_gates_gate_fkey. */
export interface GatePolicyGatesTable {
  policy_id: string;
  gate_id: string;
}

// states.ts
/** Table of migration 0009_providers.sql: one row per trip to a provider, redeemed once. */
export interface ProviderStatesTable {
  id: string;
  state_hash: string;
  provider: string;
  brand_id: string;
  purpose: 'signin' | 'link';
  interaction_id: string | null;
  user_id: string | null;
  nonce_enc: string | null;
  code_verifier_enc: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  /** SHA-256 of the flow-state cookie of the browser that started a link (migration 0012). */
  binding_hash: string | null;
  /** A link's provider identity and tokens, sealed, while it waits for the user's confirmation. */
  pending_link_enc: string | null;
  confirmed_at: Timestamp | null;
}

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
  /** The browser session the token was issued in (migration 0016); logout revokes by it. */
  session_id: Generated<string | null>;
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
  /** Migration 0017: `requirement` when denied because the user's wallets fail the app's gate policy. */
  denial: Generated<'requirement' | null>;
}

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
  /** `sub` of a verified `id_token_hint`: only that user may complete the sign-in. */
  idTokenHintSub?: string;
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
  /** Migration 0016: when the session was last used, and the browser that opened it. */
  last_seen_at: Timestamp;
  user_agent: string | null;
  ip: string | null;
}

/** The apps issued tokens in a session (code exchange or refresh), told on logout. */
export interface SessionClientsTable {
  session_id: string;
  client_id: string;
  created_at: Timestamp;
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

export type UserPublicKeyRow = Selectable<UserPublicKeysTable>;
export type InteractionRow = Selectable<InteractionsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type ConsentGrantRow = Selectable<ConsentGrantsTable>;

/**
 * The whole schema: every table of src/db/migrations, declared here and nowhere else.
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
  audit_log_daily: AuditLogDailyTable;
  audit_log_hourly: AuditLogHourlyTable;
  audit_log_rollups: AuditLogRollupsTable;
  events: EventsTable;
  authorization_codes: AuthorizationCodesTable;
  refresh_tokens: RefreshTokensTable;
  access_tokens: AccessTokensTable;
  revoked_tokens: RevokedTokensTable;
  device_authorizations: DeviceAuthorizationsTable;
  user_public_keys: UserPublicKeysTable;
  wallet_challenges: WalletChallengesTable;
  interactions: InteractionsTable;
  sessions: SessionsTable;
  session_clients: SessionClientsTable;
  consent_grants: ConsentGrantsTable;
  activity: ActivityTable;
  api_keys: ApiKeysTable;
  oauth_links: OAuthLinksTable;
  deleted_identities: DeletedIdentitiesTable;
  users_graveyard: UsersGraveyardTable;
  connections: ConnectionsTable;
  brand_scopes: BrandScopesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  org_invitations: OrgInvitationsTable;
  token_gates: TokenGatesTable;
  gate_policies: GatePoliciesTable;
  gate_policy_gates: GatePolicyGatesTable;
  provider_states: ProviderStatesTable;
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
