import type { Selectable } from 'kysely';
import type {
  AuthorizationCodesTable,
  ConsentGrantRow,
  DeviceAuthorizationsTable,
  Executor,
  RefreshTokensTable,
  SigningKeysTable,
} from '../db/schema.js';
import type { EventType } from '../events/catalog.js';
import type { Mutation } from '../events/outbox.js';
import type { Client } from './clients.js';
import type { LogoutTokenClaims } from './logout-token.js';

/**
 * What the engine keeps, behind interfaces it declares (DESIGN.md §2: "src/oidc depends on small
 * store interfaces"). The SQL implementations are in src/stores (createEngineStores); an in-memory
 * one runs the engine's unit tests (test/oidc/memory-stores.ts). Secrets arrive here already hashed.
 *
 * `Tx` is the transaction a method joins (a service opened it with `transaction`); a method given
 * none runs on its own. Implementations that have no transactions ignore it.
 */
export type Tx = Executor;

export type AuthorizationCodeRow = Selectable<AuthorizationCodesTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;
export type DeviceRow = Selectable<DeviceAuthorizationsTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type { ConsentGrantRow };

/** OAuth clients: the live app with this client id, of a live brand of a live org (cached by the engine). */
export interface ClientStore {
  /**
   * The live client, read in `tx` when given. Code running inside a transaction must pass it: the
   * embedded database has one connection, which the transaction holds, so a read outside it waits
   * for the transaction, which waits for the read.
   */
  find(clientId: string, tx?: Tx): Promise<Client | null>;
}

/** Authorization codes, by the SHA-256 of the code. */
export interface CodeStore {
  insert(row: AuthorizationCodeRow): Promise<void>;
  /** Consumed or not (the request is checked against it before consuming). */
  find(codeHash: string): Promise<AuthorizationCodeRow | null>;
  /**
   * Atomically: the first caller gets the unconsumed, unexpired row, when it also matches the whole
   * request (client, redirect URI, PKCE challenge or none), in one update; every later caller, and
   * any request that differs, gets null (nothing is consumed; the caller finds out why).
   */
  consumeMatching(
    codeHash: string,
    request: { clientId: string; redirectUri: string; codeChallenge: string | null; now: Date },
    /**
     * With a token: the same statement also records it (`RevocationStore.recordAccessToken` in the
     * code's family, for its user and session) and the client in the code's session
     * (`SessionClientStore.record`), only when the code is consumed now.
     */
    token?: { jti: string; expiresAt: Date },
  ): Promise<AuthorizationCodeRow | null>;
}

/** What the refresh token introspection shows (a live token of a live user). */
export interface ActiveRefreshToken {
  clientId: string;
  userId: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date;
}

/** Refresh tokens, by SHA-256 of the token. */
export interface TokenStore {
  findRefresh(tokenHash: string): Promise<RefreshTokenRow | null>;
  /** Atomically: the row when it was neither consumed nor revoked, else null. */
  consumeRefresh(id: string, now: Date): Promise<RefreshTokenRow | null>;
  /** Unconsumed, unrevoked, unexpired, of a user not deleted; else null. */
  findActiveRefresh(tokenHash: string, now: Date): Promise<ActiveRefreshToken | null>;
  /**
   * Writes the refresh token in `tx`; false, writing nothing, when its family was revoked or it
   * names a browser session that has ended. The family and the session stay locked until `tx` ends,
   * so a revocation or logout committing meanwhile either comes first (false here) or sees the token
   * and revokes it.
   */
  insertRefresh(tx: Tx, row: RefreshTokenRow): Promise<boolean>;
}

/** The jti record of an issued user access token (revoking its family revokes it). */
export interface AccessTokenRecord {
  jti: string;
  familyId: string;
  clientId: string;
  userId: string;
  expiresAt: Date;
  /** The browser session the grant came from, if any (logout revokes by it). */
  sessionId?: string | null;
}

/** Which token families to revoke: every filter given must match. */
export interface FamilyFilter {
  familyId?: string;
  userId?: string;
  clientId?: string;
  /** The tokens issued in one browser session (its unredeemed codes are burnt too). */
  sessionId?: string;
}

/** Revocation state: issued and revoked access-token jtis, revoked families, the sweep of expired rows. */
export interface RevocationStore {
  recordAccessToken(tx: Tx | undefined, row: AccessTokenRecord): Promise<void>;
  /** Revokes the families' refresh tokens and records their unexpired access tokens' jtis. */
  revokeFamilies(tx: Tx | undefined, filter: FamilyFilter, now: Date): Promise<void>;
  /** Marks the user's unredeemed codes as used. */
  burnCodesOfUser(tx: Tx, userId: string, now: Date): Promise<void>;
  /** Marks the unredeemed codes issued in these browser sessions as used. */
  burnCodesOfSessions(tx: Tx, sessionIds: string[], now: Date): Promise<void>;
  revokeAccessToken(tx: Tx | undefined, jti: string, expiresAt: Date, now: Date): Promise<void>;
  /** Whether the jti is in `revoked_tokens`, read in `tx`. */
  isRevoked(tx: Tx, jti: string): Promise<boolean>;
  /** Whether the jti is revoked, and (for a user id) whether that user is live — one read. */
  tokenState(jti: string, userId: string | null): Promise<{ revoked: boolean; live: boolean }>;
  /** Deletes expired codes (a day after expiry), device codes, revocation and jti records. */
  sweep(now: Date): Promise<void>;
}

/** Device authorizations (RFC 8628), by SHA-256 of the device code and of the normalized user code. */
export interface DeviceStore {
  /** False when the user code collides with a live authorization (draw again). */
  insert(row: DeviceRow): Promise<boolean>;
  findByDeviceCode(deviceCodeHash: string): Promise<DeviceRow | null>;
  findPending(userCodeHash: string, now: Date): Promise<DeviceRow | null>;
  /** Sets a pending, unexpired authorization's decision; false when there is none. */
  decide(
    userCodeHash: string,
    now: Date,
    decision:
      | { status: 'approved'; userId: string; authTime: number }
      | { status: 'denied'; denial?: 'requirement' },
  ): Promise<boolean>;
  /** Records the poll when the row's interval has passed since the last one; false when too early. */
  pollOnTime(id: string, now: Date): Promise<boolean>;
  /** Too early: adds `increment` seconds to the interval and records the poll. */
  slowDown(id: string, now: Date, increment: number): Promise<void>;
  /** Atomically: the approved row, once. */
  consumeApproved(id: string, now: Date): Promise<DeviceRow | null>;
}

/** The user's consent grants to apps (one row per user and app). */
export interface ConsentStore {
  /** The user's grants, newest change first. */
  listOfUser(userId: string): Promise<ConsentGrantRow[]>;
  /** By the app's id or its client id. */
  find(tx: Tx | undefined, userId: string, appIdOrClientId: string): Promise<ConsentGrantRow | null>;
  /** Inserts the row unless the user already has one for the app; its id, or null when it existed. */
  insertIfAbsent(tx: Tx, row: ConsentGrantRow): Promise<string | null>;
  /** The existing row, locked until the transaction ends. */
  lock(tx: Tx, userId: string, appId: string): Promise<{ id: string; scopes: string[] }>;
  setScopes(tx: Tx, id: string, scopes: string[], now: Date): Promise<void>;
  /** Deletes the user's grant to the client id; the deleted row, or null. */
  delete(tx: Tx, userId: string, clientId: string): Promise<ConsentGrantRow | null>;
}

/** Which apps were issued tokens in which browser session (`session_clients`). */
export interface SessionClientStore {
  /**
   * Records that the client was issued tokens in the session and marks the session seen; does
   * nothing when the session has ended meanwhile.
   */
  record(tx: Tx | undefined, sessionId: string, clientId: string, now: Date): Promise<void>;
  /** The user's sessions in which the client was issued tokens, forgotten for it (consent revoked). */
  takeForClient(tx: Tx, userId: string, clientId: string): Promise<string[]>;
}

/** A back-channel logout token to send to an app's receiver. */
export interface LogoutDelivery {
  orgId: string;
  appId: string;
  url: string;
  claims: LogoutTokenClaims;
}

/** Back-channel logout deliveries: queued in the webhook outbox, sent by its worker. */
export interface LogoutDeliveryStore {
  /** Queues the deliveries in `tx` (they leave after it commits) and wakes the workers. */
  enqueue(tx: Tx, rows: LogoutDelivery[], now: Date): Promise<void>;
}

/** The signing keys (private parts sealed by the caller). */
export interface SigningKeyStore {
  /** Newest first. */
  list(): Promise<SigningKeyRow[]>;
  /** Runs `fn` holding the key-creation lock of every instance; `fn` gets a store on that lock. */
  withCreationLock<T>(fn: (keys: SigningKeyStore) => Promise<T>): Promise<T>;
  insert(row: Omit<SigningKeyRow, 'retired_at'>): Promise<void>;
  /**
   * A key of the rotation schedule (`activates_at` set), in one transaction with the retirement of
   * every other unretired key at that moment, announced to every instance.
   */
  insertScheduled(row: Omit<SigningKeyRow, 'retired_at'> & { activates_at: Date }): Promise<void>;
}

/** A user as the token path sees them (profile claims). */
export interface UserProfileRow {
  id: string;
  username: string | null;
  givenName: string | null;
  familyName: string | null;
  /** An uploaded picture's URL, else the provider's picture. */
  picture: string | null;
  locale: string | null;
  email: string | null;
  emailVerified: boolean;
}

/** The accounts the engine reads: a live user's profile; whether a user is live; their activity. */
export interface AccountStore {
  profile(userId: string): Promise<UserProfileRow | null>;
  isLive(userId: string): Promise<boolean>;
  /** The user's Solana wallets, primary first, then by link time (the `wallet` scope's claims). */
  wallets(userId: string): Promise<Array<{ address: string; isPrimary: boolean }>>;
  /** Adds `device_authorized` to the user's recent activity. */
  recordDeviceAuthorized(input: { userId: string; ip?: string; userAgent?: string }): Promise<void>;
}

/** A `token.*` event of a grant that writes nothing else (group-committed with concurrent ones). */
export interface TokenEvent {
  orgId: string;
  actorUserId: string | null;
  type: EventType;
  data: Record<string, unknown>;
}

/** The audit and event outbox, as the engine uses it. */
export interface EventStore {
  /** Whether anything consumes `type` events of the org (the high-volume `token.*` ones). */
  wanted(tx: Tx | undefined, orgId: string, type: EventType): Promise<boolean>;
  /** The audit entry and events of a change, in its transaction. */
  record(tx: Tx, mutation: Mutation): Promise<void>;
  /** Resolves once the event is committed (batched with concurrent ones). */
  recordBatched(event: TokenEvent): Promise<void>;
}

/** RFC 7662 response. Inactive is exactly `{ active: false }`. */
export interface IntrospectionResponse {
  active: boolean;
  scope?: string;
  client_id?: string;
  token_type?: string;
  exp?: number;
  iat?: number;
  sub?: string;
  iss?: string;
  aud?: string;
}

/**
 * Answers for a token the issuer does not mint itself (user API keys): an active introspection
 * object, or null when the token is not one of its kind or not active. `ip` is the introspecting
 * request's source address (a key's IP allowlist applies to it).
 */
export type Introspector = (token: string, request: { ip: string }) => Promise<IntrospectionResponse | null>;

/**
 * Gate policies as the token path uses them (DESIGN §3 "Gates in tokens"). The engine never reads a
 * wallet or a balance itself: the token-gates module implements this (src/wiring.ts connects it), on
 * the public checks' balance cache (≤ 5 minutes).
 */
export interface GatePolicyEvaluator {
  /**
   * For each policy id (policies of the org `orgSlug`), whether at least one of the user's linked
   * wallets passes it; a user with no wallet passes none. Throws when the chain cannot be read.
   */
  evaluate(orgSlug: string, userId: string, policyIds: string[]): Promise<Map<string, boolean>>;
  /**
   * The org's policy's words (name, description), for a user who fails it and for a scope or app
   * naming it (in their transaction `tx`); null when the org has no such policy.
   */
  describe(
    orgId: string,
    policyId: string,
    tx?: Tx,
  ): Promise<{ name: string; description: string | null } | null>;
}

/** Which of a brand's scopes are gated: scope name → gate policy id (ungated scopes are absent). */
export interface GatedScopeStore {
  ofBrand(brandId: string): Promise<Map<string, string>>;
}

export interface EngineStores {
  /** Runs `fn` in one transaction (rolled back when it throws). */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  clients: ClientStore;
  codes: CodeStore;
  tokens: TokenStore;
  revocations: RevocationStore;
  devices: DeviceStore;
  consent: ConsentStore;
  signingKeys: SigningKeyStore;
  accounts: AccountStore;
  events: EventStore;
  sessionClients: SessionClientStore;
  logoutDeliveries: LogoutDeliveryStore;
  /** Introspection of opaque tokens other modules mint (user API keys), tried in order. */
  introspectors: Introspector[];
  gatedScopes: GatedScopeStore;
  /** Connected by src/wiring.ts (the token-gates module); until then every policy fails. */
  gatePolicies: GatePolicyEvaluator;
}
