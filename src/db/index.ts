import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../config/index.js';
import { defaults } from '../config/defaults.js';
import { isUniqueViolation } from './errors.js';
import { prepareStatements } from './prepared.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database, Db } from './schema.js';

// timestamptz → Date (default), int8 → number: counts never exceed 2^53 here.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite' | 'pglite-socket';
  /** The embedded engine, when this process owns it (served to the CLI over a Unix socket). */
  pglite?: PGlite;
  /** The PostgreSQL pool (its usage is a metric). */
  pool?: pg.Pool;
  close(): Promise<void>;
}

/** The Unix socket a running server offers the embedded database on, for the CLI. */
export function embeddedSocketDir(dataDir: string): string {
  return dataDir;
}
export function embeddedSocketPath(dataDir: string): string {
  return join(dataDir, '.s.PGSQL.5432');
}

/**
 * The connection string and the server `options` for DATABASE_SCHEMA. node-postgres lets an
 * `options` parameter of the string replace the config's, which would drop the schema's search_path
 * and put every table in `public`; so a string's own options (`?options=-c statement_timeout=5000`)
 * are taken out of it and sent together with the search_path. A string without them is kept as given.
 */
export function connectionSettings(
  connectionString: string | undefined,
  schema: string | undefined,
): { connectionString?: string; options?: string } {
  const searchPath = schema ? `-c search_path=${schema}` : undefined;
  if (!connectionString || !searchPath) return { connectionString, options: searchPath };
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, options: searchPath };
  }
  const own = url.searchParams.get('options');
  if (!own) return { connectionString, options: searchPath };
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: `${own} ${searchPath}` };
}

function pgPool(
  connectionString: string | undefined,
  schema: string | undefined,
  { extra = {}, prepared = false }: { extra?: pg.PoolConfig; prepared?: boolean } = {},
) {
  const pool = new pg.Pool({
    ...connectionSettings(connectionString, schema),
    max: 10,
    // A database that does not answer fails the request (503) instead of queueing it forever.
    connectionTimeoutMillis: 3000,
    ...extra,
  });
  // A connection the server closed (restart, failover) is dropped and replaced on next use. pg emits
  // 'error' on the client, and on the pool for idle ones; a checked-out client has no listener of
  // the pool's, so without these one restart of PostgreSQL under load ends the process. The query
  // in flight is rejected all the same (503 to its request).
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (prepared) prepareStatements(client, defaults.preparedStatementsPerConnection);
  });
  return pool;
}

export interface OpenOptions {
  /** Force an in-memory embedded database (tests). */
  memory?: boolean;
  /**
   * With `memory`: start from this dump of a data directory (`PGlite.dumpDataDir`) instead of an
   * empty one. Tests pass a migrated database, so each app skips the boot and the migrations.
   */
  template?: Blob;
  /** The CLI: reach a running server's embedded database through its socket when present. */
  preferSocket?: boolean;
}

export async function openDatabase(config: Config, opts: OpenOptions = {}): Promise<DatabaseHandle> {
  if (config.databaseUrl) {
    const pool = pgPool(config.databaseUrl, config.databaseSchema, {
      prepared: config.databasePreparedStatements,
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    if (config.databaseSchema) {
      // Instances starting together race on `if not exists`; the loser sees a unique violation.
      await sql`create schema if not exists ${sql.id(config.databaseSchema)}`.execute(db).catch((err) => {
        if (!isUniqueViolation(err)) throw err;
      });
    }
    return { db, kind: 'postgres', pool, close: () => db.destroy() };
  }
  if (opts.preferSocket && existsSync(embeddedSocketPath(config.dataDir))) {
    const pool = pgPool(undefined, undefined, {
      extra: { host: embeddedSocketDir(config.dataDir), user: 'postgres', database: 'postgres', max: 1 },
    });
    try {
      const client = await pool.connect();
      client.release();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
      return { db, kind: 'pglite-socket', close: () => db.destroy() };
    } catch {
      await pool.end().catch(() => {});
      // A stale socket file from a server that died: fall through and open the files directly.
    }
  }
  let pglite: PGlite;
  if (opts.memory) {
    pglite = opts.template ? new PGlite({ loadDataDir: opts.template }) : new PGlite();
  } else {
    const dir = join(config.dataDir, 'db');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    pglite = new PGlite(dir);
  }
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, kind: 'pglite', pglite, close: () => db.destroy() };
}

/** Throws when the database does not answer (readiness probe). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
