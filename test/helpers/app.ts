import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { CONSOLE_CLIENT_ID } from '../../src/bootstrap.js';
import { type Config, loadConfig } from '../../src/config/index.js';
import { defaults } from '../../src/config/defaults.js';
import type { AppContext } from '../../src/context.js';
import type { DatabaseHandle } from '../../src/db/index.js';
import { openDatabase } from '../../src/db/index.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { invalidateEverywhere } from '../../src/events/invalidation.js';
import { ManualClock } from '../../src/lib/clock.js';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import { signJwt } from '../../src/oidc/jwt.js';
import { closeContext, createContext } from '../../src/wiring.js';
import { keepInteractionBindings } from './browser-binding.js';
import { ResponseContract } from './contract.js';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: ManualClock;
  /** Every response checked against /openapi.json (see test/helpers/contract.ts). */
  contract: ResponseContract;
  /**
   * Stops the app and drops what the run created (the PGlite instance or the Postgres schema); then
   * fails when any response of the app did not match the OpenAPI document.
   */
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: ManualClock;
  /** Reuse another test app's database (several instances on one store). */
  shareWith?: TestApp;
  /** Extra routes registered before the app is ready (tests of shared plumbing). */
  routes?: (app: FastifyInstance) => void | Promise<void>;
  /** Where the app's log lines go (with LOG_LEVEL set in `env`), for redaction checks. */
  logStream?: { write(line: string): void };
}

const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

let template: Promise<Blob> | undefined;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Where the migrated template is kept between test processes: a file named by what makes its
 * contents (every migration and the lock file, so PGlite's version), under node_modules/.cache
 * (this checkout's, emptied by `npm ci`). Booting an empty PGlite runs initdb (~2 s); each of the
 * suite's ~120 processes did that once before the cache.
 */
function templateFile(): string {
  const hash = createHash('sha256').update(readFileSync(join(ROOT, 'package-lock.json')));
  for (const m of listMigrations()) hash.update(`\0${m.version}\0${m.sql}`);
  return join(
    ROOT,
    'node_modules',
    '.cache',
    'gatehouse-test',
    `template-${hash.digest('hex').slice(0, 24)}.tar`,
  );
}

/**
 * Writes the template whole under a name of this process, then renames it: a concurrent reader sees
 * no file or the whole file, never part of one. Templates of earlier migration sets are removed (42 MB
 * each). Best effort: a cache that cannot be written (a read-only or full disk) costs each test
 * process its own template, never a failed test.
 */
async function keepTemplate(file: string, dump: Blob): Promise<void> {
  const dir = dirname(file);
  const partial = `${file}.${process.pid}`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
    for (const name of readdirSync(dir))
      if (/^template-[0-9a-f]+\.tar$/.test(name) && join(dir, name) !== file)
        rmSync(join(dir, name), { force: true });
  } catch {
    try {
      rmSync(partial, { force: true });
    } catch {
      // The directory itself could not be made: there is no partial file to remove.
    }
  }
}

/**
 * An in-memory database with every migration applied and nothing else, made once per checkout and
 * migration set (kept on disk, see templateFile) or else once per test process. Each PGlite test app
 * starts from it (~0.4 s) instead of booting empty and migrating (~2.5 s); createContext still runs
 * the migrations (finding them applied) and seeds its own keys and console app, as on a new database.
 */
function migratedTemplate(config: Config): Promise<Blob> {
  template ??= (async () => {
    const file = templateFile();
    try {
      return new Blob([readFileSync(file)]);
    } catch {
      // Not made yet for these migrations: make it below.
    }
    const handle = await openDatabase(config, { memory: true });
    try {
      await migrate(handle.db);
      const dump = await handle.pglite!.dumpDataDir('none');
      await keepTemplate(file, dump);
      return dump;
    } finally {
      await handle.close();
    }
  })().catch((err) => {
    template = undefined;
    throw err;
  });
  return template;
}

/**
 * An app on a fresh database: in-memory PGlite by default; with DATABASE_URL a new schema per app
 * (dropped on close); with REDIS_URL, Redis keys under a prefix unique to this app.
 */
export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const run = randomAlphanumeric(10).toLowerCase();
  const schema = opts.shareWith?.ctx.config.databaseSchema ?? `gh_test_${run}`;
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    BASE_URL: 'http://gatehouse.test',
    ENCRYPTION_KEY,
    DATA_DIR: '/nonexistent-gatehouse-test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_PREFIX: opts.shareWith?.ctx.config.redisPrefix ?? `gh_test_${run}:`,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...opts.env,
  };
  const config = loadConfig(env, () => {});
  const clock = opts.clock ?? opts.shareWith?.clock ?? new ManualClock(new Date('2026-01-15T12:00:00Z'));
  let database: DatabaseHandle | undefined;
  if (opts.shareWith) {
    database = config.databaseUrl ? await openDatabase(config) : opts.shareWith.ctx.database;
  }
  const fresh = !database && !config.databaseUrl;
  const ctx = await createContext(config, {
    memory: true,
    template: fresh ? await migratedTemplate(config) : undefined,
    clock,
    database,
    warn: () => {},
  });
  const shared = !!opts.shareWith && !config.databaseUrl;
  const app = await buildApp(ctx, { ownsContext: false, logStream: opts.logStream });
  if (opts.routes) await opts.routes(app);
  const contract = new ResponseContract();
  contract.install(app);
  await app.ready();
  await contract.load(app);
  keepInteractionBindings(app);
  return {
    app,
    ctx,
    clock,
    contract,
    async close() {
      await app.close();
      if (config.databaseUrl && !opts.shareWith) {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(ctx.db);
      }
      await closeContext(ctx, { keepDatabase: shared });
      contract.assertClean();
    },
  };
}

export interface TestUser {
  id: string;
  username: string;
  token: string;
  auth: { authorization: string };
}

/** Inserts a user directly (sign-in flows have their own tests) and mints a console token for them. */
export async function createUser(t: TestApp, fields: { username?: string } = {}): Promise<TestUser> {
  const id = newId('usr_');
  const username = fields.username ?? `user-${randomAlphanumeric(8).toLowerCase()}`;
  const now = t.clock.now();
  await t.ctx.db
    .insertInto('users')
    .values({ id, username, last_seen: now, created_at: now, updated_at: now, deleted_at: null } as never)
    .execute();
  const token = await consoleToken(t, id);
  return { id, username, token, auth: { authorization: `Bearer ${token}` } };
}

/** A console access token (aud `console`) for `userId`, as the issuer would mint it. */
export async function consoleToken(
  t: TestApp,
  userId: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return signJwt(
    t.ctx.keys,
    t.clock,
    {
      iss: t.ctx.config.issuer,
      sub: userId,
      aud: 'console',
      client_id: CONSOLE_CLIENT_ID,
      scope: 'openid profile',
      jti: newId(),
      auth_time: t.clock.nowSec(),
      ...extra,
    },
    { ttl: defaults.accessTokenTtl, typ: 'at+jwt' },
  );
}

/** Grants system permissions, as `gatehouse admin grant` does. */
export async function grantSystem(t: TestApp, userId: string, permissions: string[]): Promise<void> {
  await t.ctx.db
    .insertInto('system_permissions')
    .values(permissions.map((permission) => ({ user_id: userId, permission, granted_at: t.clock.now() })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** JSON body of an inject response. */
export function json<T = any>(res: { body: string }): T {
  return JSON.parse(res.body) as T;
}

/**
 * After a test wrote `users` / `user_public_keys` directly, behind the app's back: every instance
 * drops what it cached of the user (src/oidc/user-cache.ts), as the users module's writes do.
 */
export function userChangedBehindTheApp(t: TestApp, userId: string): Promise<void> {
  return invalidateEverywhere(t.ctx.db, 'user', [userId]);
}

/**
 * For a test that relies on an instance's caches serving from memory: waits until its invalidation
 * channel listens (on PostgreSQL the LISTEN connection opens after the app is built, and until it
 * does every cache reads through), then stops the heartbeat, so that a round trip slowed by a
 * loaded machine cannot turn the caches off, and drop what they hold, in the middle of the test.
 */
export async function cachesServing(t: TestApp): Promise<void> {
  t.ctx.invalidation.setHeartbeat({ intervalMs: 600_000, timeoutMs: 600_000 });
  for (let i = 0; i < 1000 && !t.ctx.invalidation.healthy; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(t.ctx.invalidation.healthy, 'the invalidation channel listens');
}
