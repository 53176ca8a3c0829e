import type { Selectable } from 'kysely';
import type {
  Executor,
  InteractionParams,
  InteractionRow,
  ProviderStatesTable,
  UserRow,
  WalletChallengesTable,
} from '../../db/schema.js';
import type { ProviderConfig, ProviderType } from '../../providers/types.js';
import type { PageBrand } from '../pages/html.js';
import type { AuthorizationCodeRow } from '../stores.js';
import type { SignInIdentity } from './identities.js';

/**
 * What sign-in needs kept, declared here and implemented with SQL in src/stores (createSigninStores)
 * and in memory for tests (test/oidc/signin-memory-stores.ts). Every method runs on the executor the
 * stores were made for: `atomic` runs a function on stores bound to one transaction, `on(trx)` binds
 * them to a caller's transaction (a module's account deletion ends the user's sessions in it).
 */
export interface SigninStores {
  interactions: InteractionStore;
  sessions: SessionStore;
  walletChallenges: WalletChallengeStore;
  providerStates: ProviderStateStore;
  accounts: AccountStore;
  brands: SigninBrandStore;
  connections: ConnectionLookups;
  /** Codes issued in the sign-in's own transaction (the flow needs no consent: one commit). */
  codes: { insert(row: AuthorizationCodeRow): Promise<void> };
  /**
   * The last writes of a sign-in that needs no further step, in one statement: the session opened,
   * the interaction completed with its user and session (`InteractionStore.completeSignedIn`), the
   * code stored and `sign_in` recorded. Runs only in a transaction: false when the interaction was no
   * longer live, and the caller must roll back (the statement's other writes happened too).
   */
  finishSignIn(input: {
    session: NewSession;
    interactionId: string;
    code: AuthorizationCodeRow;
    activity: AccountActivity;
    now: Date;
  }): Promise<boolean>;
  /**
   * A returning wallet's sign-in in one statement, outside any transaction: the challenge consumed
   * as `WalletChallengeStore.consumeForSignIn` does, only while the interaction is live; when a live
   * account holds the wallet, in the same statement the interaction completed with its user and the
   * session, the session opened, the code stored and `sign_in` recorded for that user. Null when
   * nothing was consumed. `finished` false with an `ownerId`: the interaction ended between the
   * consumption's check and its completion (nothing but the challenge and the wallet's marks were
   * written); with none: no live account holds the wallet (only the challenge was consumed).
   */
  signInWithWallet(input: {
    messageHash: string;
    brandId: string;
    address: string;
    interactionId: string;
    session: UserlessSession;
    code: Omit<AuthorizationCodeRow, 'user_id'>;
    activity: Omit<AccountActivity, 'userId'>;
    now: Date;
  }): Promise<{ ownerId: string | null; finished: boolean } | null>;
  /** Runs `fn` in one transaction (or in the caller's, when these stores are bound to one). */
  atomic<T>(fn: (tx: SigninStores) => Promise<T>): Promise<T>;
  /** The same stores on a transaction the caller opened. */
  on(executor: Executor): SigninStores;
}

export type NewInteraction = Omit<InteractionRow, 'params'> & { params: InteractionParams };

export interface InteractionStore {
  insert(row: NewInteraction): Promise<void>;
  /** Not expired, not completed. */
  findLive(id: string, now: Date): Promise<InteractionRow | null>;
  /** Completes once: the caller that gets `true` issues the code. */
  complete(id: string, now: Date): Promise<boolean>;
  /** Puts the signed-in user on the live interaction; false when it is no longer live. */
  attachUser(
    id: string,
    fields: { userId: string; sessionId: string; authTime: Date },
    now: Date,
  ): Promise<boolean>;
  /**
   * Puts the signed-in user on the live interaction and completes it, in one update: the caller that
   * gets `true` issues the code (the sign-in needs no further step).
   */
  completeSignedIn(
    id: string,
    fields: { userId: string; sessionId: string; authTime: Date },
    now: Date,
  ): Promise<boolean>;
  deleteExpired(now: Date): Promise<number>;
}

export interface StoredSession {
  id: string;
  userId: string;
  brandId: string;
  authTime: Date;
}

/** A session as its user sees it in the list (GET /users/me/sessions). */
export interface ListedSession {
  id: string;
  brandSlug: string;
  createdAt: Date;
  lastSeenAt: Date;
  userAgent: string | null;
  ip: string | null;
  /** Its cookie's hash is one of those the request brought. */
  current: boolean;
}

/** A session that was ended, with the apps that were issued tokens in it. */
export interface EndedSession extends StoredSession {
  clientIds: string[];
}

export type NewSession = StoredSession & {
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
  userAgent: string | null;
  ip: string | null;
};

/** A new session before its user is known (the statement that finds the user inserts it). */
export type UserlessSession = Omit<NewSession, 'userId'>;

export interface SessionStore {
  insert(row: NewSession): Promise<void>;
  /** A live session of the brand by its cookie's hash, whose user is not deleted. */
  findLive(tokenHash: string, brandId: string, now: Date): Promise<StoredSession | null>;
  /**
   * A session by id (whatever the brand), to end it: a live one, or one past its expiry that the
   * sweep keeps for an offline grant issued in it (ending it ends that grant).
   */
  find(id: string): Promise<StoredSession | null>;
  /**
   * The same user signed in again (prompt=login, max_age): the session keeps its id (the `sid` apps
   * hold) and gets a fresh cookie, auth time, lifetime (`expiresAt`), browser and last use. False
   * when it has just ended.
   */
  renew(
    id: string,
    f: {
      tokenHash: string;
      authTime: Date;
      now: Date;
      expiresAt: Date;
      userAgent: string | null;
      ip: string | null;
    },
  ): Promise<boolean>;
  /** Sets `lastSeenAt` to now unless it was set less than `granularity` seconds ago. */
  touch(id: string, now: Date, granularity: number): Promise<void>;
  /** The user's live sessions on every brand, newest first; `currentHashes` mark the caller's. */
  listOfUser(userId: string, now: Date, currentHashes: string[]): Promise<ListedSession[]>;
  /** Ids of the user's sessions (live or not). */
  idsOfUser(userId: string): Promise<string[]>;
  /** Deletes the sessions, returning each with the apps that were issued tokens in it. */
  end(ids: string[]): Promise<EndedSession[]>;
  deleteByToken(tokenHash: string, brandId: string): Promise<void>;
  /** Every session of the user, on every brand. */
  deleteOfUser(userId: string): Promise<number>;
  deleteExpired(now: Date): Promise<number>;
}

export type WalletChallengeRow = Selectable<WalletChallengesTable>;

export interface WalletChallengeStore {
  insert(row: WalletChallengeRow): Promise<void>;
  /** `insert`, only while the interaction is live (not expired, not completed); false otherwise. */
  insertDuring(row: WalletChallengeRow, interactionId: string, now: Date): Promise<boolean>;
  findByMessageHash(messageHash: string): Promise<WalletChallengeRow | null>;
  /** One atomic update: false when it was consumed already. */
  consume(id: string, now: Date): Promise<boolean>;
  /**
   * Finds and consumes in one update the challenge with this message hash, when it is of this
   * purpose and brand, unexpired and unconsumed; null otherwise (the caller then finds out why).
   */
  consumeLive(
    messageHash: string,
    expected: { purpose: string; brandId: string; now: Date },
  ): Promise<WalletChallengeRow | null>;
  /**
   * `consumeLive` of a challenge issued for `address` (whose signature the caller has checked), and in
   * the same statement the wallet marked used and its live holder seen (`ownerId`; null when no live
   * account holds the wallet, and nothing but the challenge was written). Null when nothing was
   * consumed.
   */
  consumeForSignIn(
    messageHash: string,
    expected: { purpose: string; brandId: string; address: string; now: Date },
  ): Promise<{ challenge: WalletChallengeRow; ownerId: string | null } | null>;
  /** A deleted account's challenges (a link challenge names its user). */
  deleteOfUser(userId: string): Promise<void>;
  deleteExpired(now: Date): Promise<number>;
}

export type ProviderStateRow = Selectable<ProviderStatesTable>;
export type NewProviderState = Omit<
  ProviderStateRow,
  'consumed_at' | 'binding_hash' | 'pending_link_enc' | 'confirmed_at'
> & { binding_hash?: string | null };

export interface ProviderStateStore {
  insert(row: NewProviderState): Promise<void>;
  /** The live, unredeemed state a return names, for the brand whose callback id is in the path. */
  findLive(input: {
    stateHash: string;
    provider: string;
    oauthCallbackId: string;
    now: Date;
  }): Promise<ProviderStateRow | null>;
  /** Redeems once: the caller that gets the row continues. */
  consume(input: { id: string; now: Date }): Promise<ProviderStateRow | null>;
  holdPendingLink(id: string, sealed: string): Promise<void>;
  findPendingLink(id: string, now: Date): Promise<ProviderStateRow | null>;
  answerPendingLink(id: string, now: Date): Promise<boolean>;
  /** A live Telegram link state by its binding's hash, for the brand with this callback id. */
  findTelegramLink(input: {
    bindingHash: string;
    oauthCallbackId: string;
    now: Date;
  }): Promise<Pick<ProviderStateRow, 'id' | 'brand_id' | 'binding_hash'> | null>;
  deleteExpired(now: Date): Promise<number>;
}

export interface NewUserFields {
  /** Suggested username (from a provider); dropped when invalid or already taken. */
  username?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  emailVerified?: boolean;
  preferredLanguage?: string | null;
  externalProfilePictureUrl?: string | null;
}

export interface OAuthLinkInput {
  userId: string;
  provider: string;
  brandId: string;
  externalUserId: string;
  emailAddress: string | null;
  username: string | null;
  accessToken: string | null;
  /** Null keeps the refresh token stored when the sign-in brought other tokens. */
  refreshToken: string | null;
  tokenExpiresAt: Date | null;
  /** Whether the sign-in brought provider tokens at all. */
  hasTokens: boolean;
}

export type ActivityType = 'sign_in' | 'sign_in_failed' | 'link_provider' | 'unlink_provider';

export interface AccountActivity {
  userId: string;
  type: ActivityType;
  provider?: string;
  ip?: string;
  userAgent?: string;
}

/** Accounts as sign-in sees them: found by identity, created, restored, linked, named. */
export interface AccountStore {
  create(fields: NewUserFields): Promise<UserRow>;
  /** Reverses a deletion still in its grace window that had this identity; its id, or null. */
  restoreIfInGrace(identity: SignInIdentity): Promise<string | null>;
  /** Drops a user made in this transaction that lost a race for its wallet. */
  discard(userId: string): Promise<void>;
  touch(userId: string): Promise<void>;
  /** Locks the live user's row; false when there is none. */
  lockLive(userId: string): Promise<boolean>;
  walletOwner(address: string): Promise<string | null>;
  /** The live holder of the wallet, the wallet marked used and the user seen; null when none. */
  touchWalletOwner(address: string, now: Date): Promise<string | null>;
  touchWallet(address: string, now: Date): Promise<void>;
  /** False when another account holds the wallet. */
  insertPrimaryWallet(input: { id: string; userId: string; address: string; now: Date }): Promise<boolean>;
  /** The live user a provider account is linked to. */
  linkedUser(provider: string, externalUserId: string): Promise<string | null>;
  /**
   * Moves the live user's link under `legacyExternalUserId` to `externalUserId` when it was last
   * used through `brandId`; that user, or null.
   */
  adoptLegacyLink(input: {
    provider: string;
    legacyExternalUserId: string;
    externalUserId: string;
    brandId: string;
  }): Promise<string | null>;
  /** Records or refreshes the link (tokens sealed); null when another user holds the account. */
  saveOAuthLink(input: OAuthLinkInput): Promise<string | null>;
  /** A link with its provider tokens opened (for revocation at the provider); null when gone. */
  oauthLink(linkId: string): Promise<OpenedOAuthLink | null>;
  /** What the pages call the account: username, primary wallet, names, email. Null when gone. */
  describe(userId: string): Promise<AccountDescription | null>;
  recordActivity(input: AccountActivity): Promise<void>;
}

export interface OpenedOAuthLink {
  provider: string;
  brandId: string | null;
  accessToken: string | null;
  refreshToken: string | null;
}

export interface AccountDescription {
  id: string;
  username: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  /** The primary wallet (else the oldest), if any. */
  wallet: string | null;
  deleted: boolean;
}

export interface BrandPresentation {
  id: string;
  orgId: string;
  slug: string;
  name: string;
  logoUrl: string | null;
  primaryColor: string | null;
  privacyPolicyUrl: string | null;
  termsUrl: string | null;
  providerOrder: string[];
}

export interface SigninBrandStore {
  /** A live brand as the interaction view shows it. */
  presentation(brandId: string): Promise<BrandPresentation | null>;
  /** A live brand as the hosted pages show it. */
  page(brandId: string): Promise<PageBrand | null>;
  /** A live brand's callback id (the path segment of its provider returns). */
  callbackId(brandId: string): Promise<{ id: string; oauthCallbackId: string } | null>;
  /** The brand's own scope vocabulary, by name. */
  scopeDescriptions(brandId: string): Promise<Map<string, string>>;
}

/** A brand's upstream provider connections (owned by the connections module, given in wiring). */
export interface ConnectionLookups {
  credentials(
    brandId: string,
    type: ProviderType,
  ): Promise<{ source: 'brand' | 'default'; config: ProviderConfig } | null>;
  /** Types the brand offers: its enabled connections and the operator's defaults where it has none. */
  enabledTypes(brandId: string): Promise<ProviderType[]>;
}
