/**
 * Every time constant and limit of the interface, in one place. Values are in seconds unless the
 * name says otherwise. The README's configuration reference is checked against this file by a test.
 */
export const defaults = {
  /** Authorization code lifetime (interface: "The authorization code lives 60 seconds"). */
  authorizationCodeTtl: 60,
  /** Access token lifetime (interface rule 2: 3600 s). */
  accessTokenTtl: 3600,
  /** ID token lifetime; matches the access token. */
  idTokenTtl: 3600,
  /** Back-channel logout token lifetime (DESIGN.md §3: exp = iat + 120 s), signed at each attempt. */
  logoutTokenTtl: 120,
  /** A session's lastSeenAt is written at most this often (seconds), not on every use. */
  sessionSeenGranularity: 60,
  /** Refresh token lifetime; single use with rotation, so this bounds an idle family. */
  refreshTokenTtl: 30 * 24 * 3600,
  /** Device code lifetime (600 s, `expired_token` after). */
  deviceCodeTtl: 600,
  /**
   * How long an instance reuses an OAuth client (app) it loaded (milliseconds). App changes
   * invalidate it on every instance at once (src/events/invalidation.ts); this bounds an entry
   * should a notification be lost.
   */
  clientCacheTtlMs: 5000,
  /**
   * How often an instance checks that its invalidation channel still delivers (milliseconds): it
   * sends itself a notification and waits for it. A half-open connection (a partition without a
   * reset) or a pooler that drops LISTEN raises no error, so only this catches the silent loss.
   */
  invalidationHeartbeatMs: 3000,
  /**
   * How long that notification may take (milliseconds). Past it the instance turns its caches off
   * (reads go to the database), drops the connection and listens again.
   */
  invalidationHeartbeatTimeoutMs: 2000,
  /** How long an instance waits before listening again after its channel failed (milliseconds). */
  invalidationRetryMs: 1000,
  /** Most OAuth clients (hits and misses) one instance keeps cached. */
  clientCacheMaxEntries: 10_000,
  /**
   * How long an instance reuses an access token's revocation state (its jti revoked or not) that it
   * read (milliseconds); never past the token's `exp`. A revocation invalidates it on every instance
   * at once (topic `token`); this bounds an entry should a notification be lost.
   */
  tokenStateCacheTtlMs: 60_000,
  /** Most access tokens (by jti) whose revocation state one instance keeps cached. */
  tokenStateCacheMaxEntries: 100_000,
  /**
   * How long an instance reuses a user's liveness, profile claims and wallets (milliseconds). Every
   * write to `users` / `user_public_keys` invalidates them on every instance at once (topic `user`).
   */
  userCacheTtlMs: 30_000,
  /** Most users whose liveness, profile and wallets one instance keeps cached (each). */
  userCacheMaxEntries: 20_000,
  /** Past this many jtis revoked at once, one invalidation of every cached token state instead. */
  tokenInvalidationMaxKeys: 100,
  /** How often an instance deletes expired codes, device codes and revocation records (seconds). */
  tokenSweepInterval: 600,
  /** How often an instance checks whether the key rotation schedule (KEY_ROTATION_DAYS) is due (seconds). */
  keyRotationCheckInterval: 600,
  /** A scheduled signing key is in the JWKS this long before it signs (one day), so every client has it. */
  keyPublishLead: 24 * 3600,
  /** Minimum device polling interval handed to clients. */
  devicePollInterval: 5,
  /** `slow_down` adds this many seconds to a device code's interval. */
  slowDownIncrement: 5,
  /** How long an org invitation link stays valid when the request does not say (days). */
  invitationDefaultDays: 7,
  /** The longest an org invitation link may be valid (days). */
  invitationMaxDays: 30,
  /** Wallet challenge lifetime (5 minutes, single use). */
  walletChallengeTtl: 5 * 60,
  /** Sign-in interaction lifetime (hosted page to consent). */
  interactionTtl: 30 * 60,
  /**
   * Most started interactions one instance keeps in memory (their immutable part, until they expire:
   * src/oidc/signin/interactions.ts), so the wallet steps read nothing; ~1 KB each.
   */
  startedInteractionCacheMaxEntries: 20_000,
  /** Most named prepared statements one PostgreSQL connection keeps (src/db/prepared.ts). */
  preparedStatementsPerConnection: 200,
  /** Browser session lifetime per brand. */
  sessionTtl: 14 * 24 * 3600,
  /**
   * Session cookies read from one request (one per brand): a browser signed in to more brands than
   * this is unusual, and a forged Cookie header of a thousand names must not cost a thousand lookups.
   */
  maxSessionCookies: 20,
  /** Token-gate balance cache (5 minutes). */
  tokenGateCacheTtl: 5 * 60,
  /** Most (wallet, mint) balances kept by the in-memory balance cache (used when REDIS_URL is unset). */
  tokenGateCacheMaxEntries: 100_000,
  /**
   * How long an instance reuses a gate it looked up for the public check. Gate writes invalidate it
   * on every instance at once (src/events/invalidation.ts); this bounds an entry should a
   * notification be lost.
   */
  tokenGateLookupTtl: 5,
  /** Most gates (hits and misses) kept by the check's gate lookup cache. */
  tokenGateLookupMaxEntries: 10_000,
  /** Audit log entries read per batch by the export (keyset pages). */
  auditExportBatch: 1000,
  /** Delay before the first audit log pruning after start (seconds). */
  auditPruneFirstRunDelay: 60,
  /** Between two audit log prunings (seconds; daily). */
  auditPruneInterval: 24 * 3600,
  /** Seconds a mint found by the mint-info lookup is cached (its decimals never change). */
  mintInfoTtl: 3600,
  /** Seconds an address without a mint is cached by the mint-info lookup (a mint may be created). */
  mintInfoMissTtl: 60,
  /** Most mints kept by the mint-info cache. */
  mintInfoMaxEntries: 1000,
  /** Solana JSON-RPC request timeout (milliseconds); the gate check answers 504 after it. */
  solanaRpcTimeoutMs: 5000,
  /**
   * Most NFTs one collection check reads the metadata of without a DAS node (100 a
   * getMultipleAccounts call, 4 calls at a time): past it the check answers 502 rather than cost
   * the node thousands of calls for one public request on a wallet full of spam NFTs.
   */
  gateNftScanMax: 5000,
  /** getMultipleAccounts calls a collection check keeps in flight at once. */
  gateNftScanConcurrency: 4,
  /** Webhook response timeout (10 s). */
  webhookTimeout: 10,
  /** Webhook retry delays (5 retries at 1, 4, 16, 64, 256 s); overridable by WEBHOOK_RETRY_SCHEDULE. */
  webhookRetrySchedule: [1, 4, 16, 64, 256] as readonly number[],
  /**
   * Webhooks an org may hold. Every event is queued once per subscribed webhook (and retried up to
   * five times each), so without a bound one org could make each of its events thousands of
   * requests to one host and thousands of rows in the writing transaction.
   */
  webhooksPerOrgMax: 50,
  /** Consecutive failed deliveries after which a webhook is disabled (20). */
  webhookAutoDisableAfter: 20,
  /** Characters of a receiver's response body kept in the delivery log (200). */
  webhookResponseExcerpt: 200,
  /** Account deletion grace window (30 days). */
  accountDeletionGrace: 30 * 24 * 3600,
  /** How often the sweeper moves accounts whose grace window has ended to the graveyard (daily). */
  accountSweepInterval: 24 * 3600,
  /**
   * Ephemeral user API keys: the default and the longest allowed lifetime (1 hour). Standard keys
   * live until their optional `expiresAt` or until revoked.
   */
  apiKeyEphemeralTtl: 3600,
  /**
   * `force: true` on POST /users/me/public-keys (moving a wallet from another account) needs, besides
   * the wallet's fresh signature, a sign-in by the caller this recent: the access token's `auth_time`.
   */
  walletForceReauthWindow: 10 * 60,
  /** How long a deleted org's slug stays reserved (90 days). */
  orgSlugReservation: 90 * 24 * 3600,
  /** A retired signing key stays in the JWKS this long after retirement (longest token lifetime + 5 min). */
  retiredKeyGrace: 3600 + 300,
  /** Discovery document Cache-Control max-age (clients should cache for at least 1 hour). */
  discoveryMaxAge: 3600,
  /** JWKS Cache-Control max-age (clients cache by kid for at least 10 minutes). */
  jwksMaxAge: 600,
  /**
   * Access tokens whose signature and claims an instance remembers having verified (by SHA-256,
   * at most 60 s each; src/oidc/tokens.ts `verifiedClaims`). Past this, the least recently used go.
   */
  verifiedTokenCacheMax: 20_000,
  /** How stale an instance's copy of the key set may be before it rereads it (milliseconds). */
  keySetRefreshMs: 1000,
  /**
   * A new signing key is published in the JWKS at once but signs only this long after it was made
   * (milliseconds): by then every instance's JWKS has it (two refresh intervals). Found by the chaos
   * test: signing at once let instance A hand out tokens instance B's JWKS did not list yet.
   */
  keyActivationDelayMs: 2000,
  /** Audit log retention by org tier, in days (null: unlimited). */
  auditRetentionDays: { identity: 30, brand: 90, federation: 365, authority: null } as Record<
    string,
    number | null
  >,
  /** Upstream provider calls (token, user info, JWKS, revocation) give up after this (milliseconds). */
  providerRequestTimeoutMs: 10_000,
  /** How long a console "link a provider" start stays redeemable (no interaction bounds it). */
  providerLinkStateTtl: 10 * 60,
  /** Telegram Login Widget data older than this (by `auth_date`) is refused (one day). */
  telegramAuthMaxAge: 24 * 3600,
  /** Lifetime of the cookie binding a browser to its Telegram widget page and interaction. */
  telegramBindingTtl: 10 * 60,
  /** Upload size cap for POST /files (2 MB). */
  maxFileBytes: 2 * 1024 * 1024,
  /** JSON body cap for every other route. */
  maxBodyBytes: 1024 * 1024,
  /** Accounts moved to the graveyard per transaction, so one sweep never holds a long lock. */
  accountSweepBatch: 100,
  /** Audit log rows deleted per statement while pruning. */
  auditPruneBatch: 5000,
  /** How long an instance trusts its copy of an org's webhook subscriptions when deciding to record `token.*` (ms). */
  webhookInterestTtlMs: 1000,
  /** Most orgs whose webhook subscriptions an instance keeps (the cache is emptied past it). */
  webhookInterestMaxOrgs: 10_000,
  /** Most webhook signing secrets the delivery worker keeps decrypted (emptied past it). */
  webhookSecretCacheMax: 10_000,
  /** Before the delivery worker listens again after its notification connection dropped (ms). */
  webhookReconnectDelayMs: 1000,
  /** An API key's `last_used_at` is written at most this often (seconds), not on every request. */
  apiKeyTouchInterval: 60,
  /** Between two sweeps of the in-memory rate-limit windows (ms). */
  rateLimitMemorySweepMs: 60_000,
  /** Most network-source keys memoized (emptied past it). */
  networkSourceMemoMax: 10_000,
} as const;

/** Field limits of the interface. */
export const limits = {
  nameMax: 80,
  roleNameMax: 60,
  descriptionMax: 500,
  slugPattern: '^[a-z0-9-]{3,30}$',
  usernamePattern: '^[a-z0-9-]{3,30}$',
  personNameMax: 80,
  scopeNamePattern: '^[a-z0-9:_-]{2,80}$',
  findByWalletsMax: 100,
  logLimitMax: 200,
  logLimitDefault: 50,
  orgListLimitMax: 100,
  orgListLimitDefault: 50,
  /** Digits of a token gate's `minHoldings` (any size in principle; a u64 balance has 20 digits). */
  minHoldingsMaxDigits: 1000,
} as const;

/**
 * Rate limits of the interface: `points` requests per `duration` seconds, per the key named in the
 * interface's table. Every `points` is multiplied by RATE_LIMIT_MULTIPLIER (0 switches them off).
 */
export const rateLimits = {
  tokenGateWrite: { points: 30, duration: 60 },
  gateCheck: { points: 600, duration: 60 },
  gateCheckRefresh: { points: 60, duration: 60 },
  /** The bulk gate check, per IP: each request spends wallets × gates points (DESIGN §3). */
  gateBulkCheck: { points: 6000, duration: 60 },
  /**
   * Not in the interface: RS256 signatures of a bulk check with `attest=true`, per IP (each distinct
   * wallet × gate pair costs one). The single and policy checks sign one each under `gateCheck`; a
   * bulk request may ask for 2,000, and signing, not the balance read, is then the cost.
   */
  gateAttest: { points: 2000, duration: 60 },
  wellKnown: { points: 600, duration: 60 },
  authorize: { points: 60, duration: 60 },
  token: { points: 30, duration: 60 },
  revoke: { points: 30, duration: 60 },
  introspect: { points: 60, duration: 60 },
  userinfo: { points: 60, duration: 60 },
  deviceAuthorize: { points: 30, duration: 60 },
  /**
   * Not in the interface: views of the device page per network source. A live code without a session
   * starts an interaction (a row and two cookies) on every view, like /oauth2/authorize.
   */
  devicePage: { points: 60, duration: 60 },
  usersMeRead: { points: 60, duration: 60 },
  /** Not in the interface: other writes under /users/me (PATCH, DELETE, challenges), per user. */
  usersMeWrite: { points: 30, duration: 60 },
  apiKeyCreate: { points: 10, duration: 3600 },
  publicKeyCreate: { points: 10, duration: 60 },
  usersFind: { points: 30, duration: 60 },
  /** Not in the interface: mint lookups (a call to the Solana RPC on a miss) per org. */
  mintInfo: { points: 30, duration: 60 },
  orgRead: { points: 60, duration: 60 },
  orgWrite: { points: 30, duration: 60 },
  /** Not in the interface: org slug checks as the user types, per user and network source. */
  orgSlugAvailability: { points: 120, duration: 60 },
  auditLogRead: { points: 60, duration: 60 },
  webhookCreate: { points: 10, duration: 60 },
  webhookTest: { points: 30, duration: 60 },
  webhookRotate: { points: 5, duration: 60 },
  webhookDeliveriesRead: { points: 60, duration: 60 },
  /**
   * Not in the interface: failed client authentication at /oauth2/* per (client_id, network source).
   * Only failures spend it, and only the failing requests are refused: the right secret always passes.
   */
  clientAuthFailure: { points: 10, duration: 60 },
  /** Not in the interface: failed client authentication per network source, whatever the client_id. */
  clientAuthFailureSource: { points: 30, duration: 60 },
  /** Not in the interface: device-code polls naming an unknown (or used) device code, per network source. */
  deviceCodeUnknown: { points: 10, duration: 60 },
  /** Not in the interface: wrong device user codes, per IP, so codes cannot be guessed. */
  deviceUserCode: { points: 10, duration: 60 },
  /** Not in the interface: wallet challenges and proofs on the hosted sign-in, per IP. */
  signinWallet: { points: 30, duration: 60 },
  /** Not in the interface: trips to an upstream provider started per IP (each stores a state). */
  providerStart: { points: 60, duration: 60 },
  /** Not in the interface: uploads per user. */
  fileUpload: { points: 30, duration: 60 },
  /**
   * Not in the interface: bytes stored by uploads per user and per network source, a day. Files live
   * in the database and a new account is one wallet away: these bound what one source can fill.
   */
  fileUploadBytes: { points: 20 * 1024 * 1024, duration: 86_400 },
  fileUploadSourceBytes: { points: 50 * 1024 * 1024, duration: 86_400 },
  /** Invitation accepts per user (beyond the interface; a token is 256 bits, this caps noise). */
  invitationAccept: { points: 10, duration: 60 },
} as const;

export type RateLimitName = keyof typeof rateLimits;
