import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { defaults } from './defaults.js';

/** Upstream sign-in provider types (the connection types of the interface). */
export const PROVIDER_TYPES = [
  'google',
  'apple',
  'microsoft',
  'discord',
  'facebook',
  'x',
  'telegram',
  'matrica',
] as const;

/** Thrown for a bad configuration value; main prints only its message (one line naming the variable). */
export class ConfigError extends Error {}

export interface ProviderOverrides {
  clientId?: string;
  clientSecret?: string;
  [key: string]: string | undefined;
}

export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  baseUrl: string;
  /** The issuer identifier: BASE_URL without a trailing slash. */
  issuer: string;
  dataDir: string;
  databaseUrl?: string;
  /** Postgres schema to use (tests create one per run); default `public`. */
  databaseSchema?: string;
  /**
   * Named prepared statements on PostgreSQL (DATABASE_PREPARED_STATEMENTS, default on; off behind a
   * proxy that cannot carry them). src/db/prepared.ts.
   */
  databasePreparedStatements: boolean;
  redisUrl?: string;
  /** Prefix for every Redis key, so several deployments (or test runs) can share one Redis. */
  redisPrefix: string;
  encryptionKey: Buffer;
  solanaRpcUrl: string;
  /**
   * Which peers may set `X-Forwarded-For`: false (none: the socket address is the client), a hop
   * count (that many proxies in front, the right-most entries), or proxy addresses/CIDRs.
   */
  trustProxy: false | number | string[];
  rateLimitMultiplier: number;
  /** IPv6 sources share a rate-limit bucket per network of this prefix length (default /64). */
  rateLimitIpv6Prefix: number;
  webhookAllowPrivateNetworks: boolean;
  webhookRetrySchedule: number[];
  logLevel: string;
  /** Which requests get a log line: every one, only 4xx/5xx, or none (LOG_REQUESTS). */
  logRequests: 'all' | 'errors' | 'off';
  /** Port of the Prometheus `/metrics` listener (on HOST); undefined: no metrics listener. */
  metricsPort?: number;
  /** Scheduled signing-key rotation: a new key every this many days (KEY_ROTATION_DAYS); undefined: off. */
  keyRotationDays?: number;
  filesBaseUrl: string;
  /**
   * How many worker processes share the port (WORKERS): 1 runs the server in this process; more
   * forks a cluster (src/cluster.ts). Only with PostgreSQL and Redis, see readWorkers.
   */
  workers: number;
  /** PROVIDER_<TYPE>_<SETTING> values, keyed by lower-case type then camelCase setting. */
  providers: Record<string, ProviderOverrides>;
}

type Env = Record<string, string | undefined>;

const NODE_ENVS = ['development', 'test', 'production'];
const LOG_REQUESTS = ['all', 'errors', 'off'];

function fail(name: string, why: string): never {
  throw new ConfigError(`Invalid configuration: ${name} ${why}`);
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) fail(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) fail(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  return fail(name, `must be true or false, got "${env[name]}"`);
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return fail(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(u.protocol)) fail(name, `must use ${protocols.join(' or ')}, got "${u.protocol}"`);
  return raw;
}

/** Names proxy-addr accepts for well-known ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrCidr(s: string): boolean {
  if (PROXY_RANGE_NAMES.includes(s)) return true;
  const [addr, bits, extra] = s.split('/');
  const version = isIP(addr);
  if (!version || extra !== undefined) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (version === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset/false trusts no proxy; `true` means one hop (the load balancer in front); a
 * number is a hop count; otherwise a comma-separated list of proxy addresses or CIDRs. Trusting every
 * hop (the left-most, client-written X-Forwarded-For entry) is not offered: it makes every per-IP
 * limit bypassable with a forged header.
 */
function readTrustProxy(raw: string | undefined): false | number | string[] {
  const v = raw?.trim().toLowerCase();
  if (v === undefined || v === '' || ['0', 'false', 'no', 'off'].includes(v)) return false;
  if (['true', 'yes', 'on'].includes(v)) return 1;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 10) fail('TRUST_PROXY', `hop count must be at most 10, got ${hops}`);
    return hops;
  }
  const list = v.split(',').map((p) => p.trim());
  const bad = list.find((p) => !isAddressOrCidr(p));
  if (bad !== undefined)
    fail(
      'TRUST_PROXY',
      `must be true, false, a hop count, or comma-separated proxy addresses/CIDRs; "${bad}" is none of these`,
    );
  return list;
}

function camel(s: string): string {
  return s.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function readEncryptionKey(env: Env, nodeEnv: string, dataDir: string, warn: (msg: string) => void): Buffer {
  const raw = env.ENCRYPTION_KEY;
  if (raw) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) fail('ENCRYPTION_KEY', 'must be 32 bytes encoded as base64');
    return key;
  }
  if (nodeEnv === 'production') fail('ENCRYPTION_KEY', 'is required when NODE_ENV=production');
  const file = join(dataDir, 'encryption.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) fail('ENCRYPTION_KEY', `(from ${file}) must be 32 bytes encoded as base64`);
    return key;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  warn(`ENCRYPTION_KEY is not set: generated one into ${file}. Set ENCRYPTION_KEY in production.`);
  return key;
}

function readRateLimitMultiplier(env: Env): number {
  const raw = env.RATE_LIMIT_MULTIPLIER;
  if (raw === undefined || raw === '') return 1;
  const multiplier = Number(raw);
  if (!Number.isFinite(multiplier) || multiplier < 0)
    fail('RATE_LIMIT_MULTIPLIER', `must be a number >= 0, got "${raw}"`);
  return multiplier;
}

function readWebhookRetrySchedule(env: Env): number[] {
  if (!env.WEBHOOK_RETRY_SCHEDULE) return [...defaults.webhookRetrySchedule];
  const parts = env.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d+(\.\d+)?$/.test(p)))
    fail('WEBHOOK_RETRY_SCHEDULE', `must be comma-separated seconds, got "${env.WEBHOOK_RETRY_SCHEDULE}"`);
  return parts.map(Number);
}

/** `PROVIDER_<TYPE>_<FIELD>` variables, by provider type; endpoint URLs must be http(s). */
function readProviderOverrides(env: Env): Record<string, ProviderOverrides> {
  const providers: Record<string, ProviderOverrides> = {};
  for (const type of PROVIDER_TYPES) {
    const prefix = `PROVIDER_${type.toUpperCase()}_`;
    const entry: ProviderOverrides = {};
    for (const [k, v] of Object.entries(env)) {
      if (k.startsWith(prefix) && v) entry[camel(k.slice(prefix.length))] = v;
    }
    for (const k of ['authorizationUrl', 'tokenUrl', 'userinfoUrl', 'issuer', 'jwksUrl', 'revocationUrl']) {
      if (entry[k]) url({ [`${prefix}${k}`]: entry[k] }, `${prefix}${k}`, undefined, ['http:', 'https:']);
    }
    providers[type] = entry;
  }
  return providers;
}

/** The most workers WORKERS accepts: more than the cores is allowed (I/O-bound waits), not without bound. */
export const MAX_WORKERS = 64;

/**
 * WORKERS: several processes sharing the port need state every worker sees. The embedded database
 * is one process: served to workers over its socket, every query of every worker runs one at a time
 * in one shared session, and LISTEN/NOTIFY does not reach socket clients (a worker's caches would
 * stay off), so it gains nothing and is refused. The in-memory rate limiter is per process: n
 * workers would multiply every limit by n, so several workers need REDIS_URL. The default is the
 * number of cores where several workers are allowed (never under NODE_ENV=test), else 1.
 */
function readWorkers(env: Env, nodeEnv: string, databaseUrl?: string, redisUrl?: string): number {
  const shared = Boolean(databaseUrl && redisUrl);
  const fallback = shared && nodeEnv !== 'test' ? Math.min(availableParallelism(), MAX_WORKERS) : 1;
  const workers = int(env, 'WORKERS', fallback, 1, MAX_WORKERS);
  if (workers === 1) return 1;
  if (!databaseUrl)
    fail(
      'WORKERS',
      `must be 1 with the embedded database (got ${workers}): it is one process, and over its socket every worker's queries would run one at a time in one shared session with no cache invalidation; set DATABASE_URL to run several workers`,
    );
  if (!redisUrl)
    fail(
      'WORKERS',
      `must be 1 without REDIS_URL (got ${workers}): each worker would count rate limits on its own, multiplying every limit by ${workers}; set REDIS_URL to share them`,
    );
  return workers;
}

/**
 * Reads and validates the whole configuration. Throws ConfigError naming the first bad variable.
 * `warn` receives one-line notices (such as a generated encryption key).
 */
export function loadConfig(env: Env = process.env, warn: (msg: string) => void = console.warn): Config {
  const nodeEnv = env.NODE_ENV || 'development';
  if (!NODE_ENVS.includes(nodeEnv))
    fail('NODE_ENV', `must be one of ${NODE_ENVS.join(', ')}; got "${nodeEnv}"`);
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const baseUrl = url(env, 'BASE_URL', `http://localhost:${port}`, ['http:', 'https:'])!.replace(/\/+$/, '');
  const dataDir = resolve(env.DATA_DIR || './data');
  const databaseUrl = url(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']);
  const redisUrl = url(env, 'REDIS_URL', undefined, ['redis:', 'rediss:']);
  const solanaRpcUrl = url(env, 'SOLANA_RPC_URL', 'https://api.mainnet-beta.solana.com', [
    'http:',
    'https:',
  ])!;
  const filesBaseUrl = (
    url(env, 'FILES_BASE_URL', `${baseUrl}/files`, ['http:', 'https:']) as string
  ).replace(/\/+$/, '');

  const rateLimitMultiplier = readRateLimitMultiplier(env);
  const webhookRetrySchedule = readWebhookRetrySchedule(env);
  const trustProxy = readTrustProxy(env.TRUST_PROXY);
  const rateLimitIpv6Prefix = int(env, 'RATE_LIMIT_IPV6_PREFIX', 64, 1, 128);

  const logLevel = env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel))
    fail('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}"`);

  const logRequests = (env.LOG_REQUESTS || 'all') as Config['logRequests'];
  if (!LOG_REQUESTS.includes(logRequests))
    fail('LOG_REQUESTS', `must be one of ${LOG_REQUESTS.join(', ')}; got "${logRequests}"`);

  let metricsPort: number | undefined;
  if (env.METRICS_PORT) {
    metricsPort = int(env, 'METRICS_PORT', 0, 0, 65535);
    if (metricsPort !== 0 && metricsPort === port)
      fail('METRICS_PORT', `must differ from PORT (${port}): metrics are never served on the public port`);
  }

  // Off unless set; each new key is published a day before it signs (src/oidc/key-rotation.ts).
  const keyRotationDays = env.KEY_ROTATION_DAYS ? int(env, 'KEY_ROTATION_DAYS', 0, 1, 3650) : undefined;

  const databaseSchema = env.DATABASE_SCHEMA || undefined;
  if (databaseSchema && !/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema))
    fail('DATABASE_SCHEMA', 'must be a lower-case SQL identifier');
  const providers = readProviderOverrides(env);
  const workers = readWorkers(env, nodeEnv, databaseUrl, redisUrl);

  return {
    nodeEnv,
    port,
    host,
    baseUrl,
    issuer: baseUrl,
    dataDir,
    databaseUrl,
    databaseSchema,
    databasePreparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    redisUrl,
    redisPrefix: env.REDIS_PREFIX || 'gatehouse:',
    encryptionKey: readEncryptionKey(env, nodeEnv, dataDir, warn),
    solanaRpcUrl,
    trustProxy,
    rateLimitMultiplier,
    rateLimitIpv6Prefix,
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookRetrySchedule,
    logLevel,
    logRequests,
    keyRotationDays,
    metricsPort,
    filesBaseUrl,
    workers,
    providers,
  };
}
