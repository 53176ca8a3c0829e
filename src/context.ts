import type { Redis } from 'ioredis';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config/index.js';
import type { DatabaseHandle } from './db/index.js';
import type { Db, Executor } from './db/schema.js';
import type { BrandDeletedHandler } from './modules/brands/brands.service.js';
import type { RateLimits } from './http/rate-limit.js';
import type { Clock } from './lib/clock.js';
import type { Encryptor } from './lib/encryption.js';
import type { KeyStore } from './oidc/keys.js';
import type { EngineStores } from './oidc/stores.js';
import type { AccessTokenClaims } from './oidc/tokens.js';
import type { InvalidationBus } from './events/invalidation.js';
import type { Metrics } from './ops/metrics.js';
import type { SigninStores } from './oidc/signin/stores.js';

/** Who is calling a REST route. */
export interface Principal {
  kind: 'access_token' | 'api_key';
  userId: string;
  /** Scopes of the token or API key. */
  scopes: string[];
  clientId?: string;
  jti?: string;
  apiKeyId?: string;
  /** Token expiry (unix seconds), for access tokens. */
  exp?: number;
}

/**
 * Verifies a user API key presented as `Authorization: Bearer ghsk_…`. Registered by the users
 * module; returns null for an unknown, revoked, expired or IP-refused key.
 */
export type ApiKeyVerifier = (key: string, req: FastifyRequest) => Promise<Principal | null>;

/**
 * An extra check on a verified access token (revoked jti, disabled app, deleted user …). Returns
 * false to reject the token with `invalid_token`. Registered by the modules that own the state.
 */
export type AccessTokenCheck = (claims: Record<string, unknown>) => Promise<boolean>;

export interface AppContext {
  config: Config;
  db: Db;
  database: DatabaseHandle;
  clock: Clock;
  encryptor: Encryptor;
  keys: KeyStore;
  rateLimits: RateLimits;
  /** Cross-instance invalidation of the caches of security state (fail closed while it is down). */
  invalidation: InvalidationBus;
  redis?: Redis;
  /** This instance's Prometheus metrics (served only when METRICS_PORT is set). */
  metrics: Metrics;
  /** What the engine and sign-in keep, behind the interfaces they declare (built in wiring.ts). */
  stores: EngineStores & { signin: SigninStores };
  /**
   * The one access-token verifier (src/oidc/tokens.ts): ours, at+jwt, unexpired, of `audience` when
   * given, passing every access-token check; null otherwise.
   */
  verifyAccessToken(token: string, opts?: { audience?: string }): Promise<AccessTokenClaims | null>;
  /** Extension points modules plug into at registration. */
  hooks: {
    apiKeyVerifier?: ApiKeyVerifier;
    accessTokenChecks: AccessTokenCheck[];
    /** Background jobs started with the server (webhook worker, pruning, sweeper), stopped on close. */
    onClose: Array<() => Promise<void> | void>;
    /**
     * The system permissions a user holds (the orgs module's `systemPermissions`, set by wiring.ts),
     * for `requireSystemPermission` (src/http/guards.ts) on routes outside the orgs module.
     */
    systemPermissions?: (userId: string) => Promise<Set<string>>;
    /** What a brand's deletion disables with it, in its transaction (apps, connections; wiring.ts). */
    brandDeleted?: BrandDeletedHandler[];
    /**
     * In `trx`, announces that every app of the brand changed (their cached clients carry the
     * brand's gated scopes; the apps module's); returns what to run after the commit.
     */
    brandAppsChanged?: (trx: Executor, brandId: string) => Promise<() => void>;
    /** Client ids of a brand's live apps that list a scope (the apps module's): such a scope stays. */
    appsUsingScope?: (db: Executor, brandId: string, name: string) => Promise<string[]>;
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}
