import { Redis } from 'ioredis';
import { ensureConsole } from './bootstrap.js';
import { type Config, ConfigError } from './config/index.js';
import type { AppContext } from './context.js';
import { type DatabaseHandle, type OpenOptions, openDatabase } from './db/index.js';
import { migrate } from './db/migrate.js';
import { unreachableDatabase } from './db/unavailable.js';
import { RateLimits } from './http/rate-limit.js';
import { type Clock, systemClock } from './lib/clock.js';
import { Encryptor } from './lib/encryption.js';
import { KeyStore } from './oidc/keys.js';
import { verifyAccessToken } from './oidc/tokens.js';
import { cachedAccounts } from './oidc/user-cache.js';
import { introspectApiKey } from './modules/api-keys/api-keys.service.js';
import { recordActivity } from './modules/users/activity.js';
import { createEngineStores, type EngineStoreDeps } from './stores/engine.js';
import { InvalidationBus } from './events/invalidation.js';
import { addEventSink, setEventInterest } from './events/outbox.js';
import { verifyApiKey } from './modules/api-keys/api-keys.service.js';
import { appsUsingScope } from './modules/apps/apps.queries.js';
import {
  brandAppsChanged,
  disableAppsOfDeletedBrand,
  disableAppsOfDeletedOrg,
} from './modules/apps/apps.cascade.js';
import { deleteBrandsOfOrg } from './modules/brands/brands.service.js';
import {
  disableConnectionsOfDeletedBrand,
  disableConnectionsOfDeletedOrg,
} from './modules/connections/connections.cascade.js';
import { systemPermissions } from './modules/orgs/org.guards.js';
import { onOrgDeleted } from './modules/orgs/orgs.service.js';
import { disableOrgTokenGates } from './modules/token-gates/token-gates.service.js';
import { gatePolicyEvaluator } from './modules/token-gates/gates-in-tokens.js';
import {
  disableOrgWebhooks,
  followWebhookChanges,
  webhookInterest,
  webhookOutboxSink,
} from './modules/webhooks/webhooks.service.js';
import { Metrics } from './ops/metrics.js';
import {
  enabledProviderTypes,
  resolveConnectionCredentials,
} from './modules/connections/connections.service.js';
import { fileTrackers, fileUrl } from './modules/files/files.service.js';
import { createSigninStores, type SigninStoreDeps } from './stores/signin.js';
import type { SigninStores } from './oidc/signin/stores.js';

export interface ContextOptions extends OpenOptions {
  clock?: Clock;
  /** An already-open database (tests sharing one). */
  database?: DatabaseHandle;
  warn?: (msg: string) => void;
  /** false: a cluster worker, whose primary migrated before forking it (default true). */
  migrate?: boolean;
  /** Progress lines of the start (one per migration applied). */
  info?: (obj: Record<string, unknown>, msg: string) => void;
}

/**
 * Opens the stores and prepares shared state: database (migrated), Redis, signing keys, the console
 * brand. Everything a Fastify app (or the CLI) needs, without listening.
 */
export async function createContext(config: Config, opts: ContextOptions = {}): Promise<AppContext> {
  const clock = opts.clock ?? systemClock;
  const warn = opts.warn ?? ((m: string) => console.warn(m));
  let database: DatabaseHandle | undefined = opts.database;
  try {
    if (!database)
      opts.info?.(
        { database: config.databaseUrl ? 'postgres' : `embedded in ${config.dataDir}` },
        'opening the database',
      );
    database ??= await openDatabase(config, opts);
    if (opts.migrate !== false)
      await migrate(database.db, (version, ms) => opts.info?.({ version, ms }, 'migration applied'));
  } catch (err) {
    // A database that cannot be reached is a configuration problem to the operator: one line.
    const reason = unreachableDatabase(err);
    if (!reason || !config.databaseUrl) throw err;
    await database?.close().catch(() => {});
    throw new ConfigError(`Invalid configuration: DATABASE_URL ${reason}`);
  }

  let redis: Redis | undefined;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
    });
    redis.on('error', () => {
      /* reported by the limiter's fallback and /readyz; avoid unhandled error events */
    });
    try {
      await redis.connect();
    } catch (err) {
      warn(
        `REDIS_URL is set but Redis is unreachable (${(err as Error).message}); using per-instance memory until it returns`,
      );
    }
  }

  // Listening before any cache is filled: a change another instance makes from now on reaches us.
  const invalidation = new InvalidationBus(database, config, { warn: (_o, msg) => warn(msg ?? '') });
  await invalidation.start();

  const metrics = new Metrics();
  metrics.sources.pool = database.pool;
  const encryptor = new Encryptor(config.encryptionKey);
  const onClose: Array<() => Promise<void> | void> = [];
  const db = database.db;
  const stores = createEngineStores(db, engineStoreDeps(config, database, clock, onClose));
  const keys = new KeyStore(stores.signingKeys, encryptor, clock, invalidation);
  await keys.ensureKey();
  await ensureConsole(database.db, config, clock);

  const ctx: AppContext = {
    config,
    db: database.db,
    database,
    clock,
    encryptor,
    keys,
    invalidation,
    rateLimits: new RateLimits(
      config.rateLimitMultiplier,
      redis,
      config.redisPrefix,
      config.rateLimitIpv6Prefix,
      (name) => metrics.rateLimited.inc({ limit: name }),
    ),
    redis,
    metrics,
    stores: { ...stores, signin: {} as SigninStores },
    verifyAccessToken: (token, opts) => verifyAccessToken(ctx, token, opts),
    hooks: { accessTokenChecks: [], onClose },
  };
  ctx.stores.signin = createSigninStores(database.db, signinStoreDeps(ctx));
  ctx.stores.accounts = cachedAccounts(ctx, stores.accounts);
  stores.introspectors.push((token, request) => introspectApiKey(ctx, token, request.ip));
  wireModules(ctx);
  return ctx;
}

/**
 * The modules' extension points, connected here rather than by import or registration side effects:
 * the webhook outbox as the event sink and interest check of `recordMutation`, its subscription cache
 * following webhook writes, the handlers an org's or a brand's deletion runs in its transaction (the
 * apps, connections, … under it), the scope-in-use check of the apps, the API key
 * verifier of bearer authentication, the system permissions `requireSystemPermission` reads and the
 * gate policy evaluator of the token path. The
 * outbox and org-deletion registries are idempotent by reference, so several contexts in one process
 * (tests) register each handler once.
 */
function wireModules(ctx: AppContext): void {
  addEventSink(webhookOutboxSink);
  setEventInterest(webhookInterest);
  ctx.hooks.onClose.push(followWebhookChanges(ctx.invalidation));
  onOrgDeleted(deleteBrandsOfOrg);
  onOrgDeleted(disableAppsOfDeletedOrg);
  onOrgDeleted(disableConnectionsOfDeletedOrg);
  onOrgDeleted(disableOrgWebhooks);
  onOrgDeleted(disableOrgTokenGates);
  ctx.hooks.apiKeyVerifier = (key, req) => verifyApiKey(ctx, key, req.ip);
  ctx.hooks.systemPermissions = (userId) => systemPermissions(ctx, userId);
  ctx.hooks.brandDeleted = [disableAppsOfDeletedBrand, disableConnectionsOfDeletedBrand];
  ctx.hooks.appsUsingScope = appsUsingScope;
  ctx.hooks.brandAppsChanged = (trx, brandId) => brandAppsChanged(ctx, trx, brandId);
  ctx.stores.gatePolicies = gatePolicyEvaluator(ctx);
}

/** Closes what createContext opened (background jobs first, then Redis, then the database). */
export async function closeContext(ctx: AppContext, opts: { keepDatabase?: boolean } = {}): Promise<void> {
  for (const stop of ctx.hooks.onClose.splice(0).reverse()) await stop();
  await ctx.invalidation.stop();
  if (ctx.redis) ctx.redis.disconnect();
  if (!opts.keepDatabase) await ctx.database.close();
}

/** What the engine's stores get from the modules that own the data (activity, file URLs). */
function engineStoreDeps(
  config: Config,
  database: DatabaseHandle,
  clock: Clock,
  onClose: Array<() => Promise<void> | void>,
): EngineStoreDeps {
  return {
    clock,
    postgres:
      database.kind === 'postgres' && config.databaseUrl
        ? { connectionString: config.databaseUrl, schema: config.databaseSchema }
        : undefined,
    onClose: (stop) => onClose.push(stop),
    fileUrl: (fileKey) => fileUrl(config, fileKey),
    recordActivity: (input) => recordActivity(database.db, clock, input),
  };
}

/** What sign-in's stores get from the modules that own the data (activity, files, connections). */
function signinStoreDeps(ctx: AppContext): SigninStoreDeps {
  return {
    clock: ctx.clock,
    encryptor: ctx.encryptor,
    recordActivity: (db, input) => recordActivity(db, ctx.clock, input),
    fileUrls: async (db, ids) =>
      new Map([...(await fileTrackers(db, ctx.config, ids))].map(([id, f]) => [id, f.url])),
    connections: {
      credentials: (brandId, type) => resolveConnectionCredentials(ctx, brandId, type),
      enabledTypes: (brandId) => enabledProviderTypes(ctx, brandId),
    },
  };
}
