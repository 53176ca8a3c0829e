import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from './schema.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Any constant: instances starting together on an empty database take this lock and migrate once. */
const MIGRATION_LOCK = 7_417_001;

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(join(MIGRATIONS_DIR, f), 'utf8') }));
}

/**
 * Applies pending migrations in order, each in its own transaction, under a session advisory lock
 * so that several instances (or the CLI) never apply one twice. Returns the versions applied;
 * `onApplied` hears of each as it commits (the start logs one line per migration).
 */
export async function migrate(db: Db, onApplied?: (version: string, ms: number) => void): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    try {
      await sql`create table if not exists schema_migrations (
        version text primary key, applied_at timestamptz not null default now())`.execute(conn);
      const done = new Set(
        (await sql<{ version: string }>`select version from schema_migrations`.execute(conn)).rows.map(
          (r) => r.version,
        ),
      );
      const applied: string[] = [];
      for (const m of listMigrations()) {
        if (done.has(m.version)) continue;
        const started = performance.now();
        await conn.transaction().execute(async (trx) => {
          await sql.raw(m.sql).execute(trx);
          await sql`insert into schema_migrations (version) values (${m.version})`.execute(trx);
        });
        applied.push(m.version);
        onApplied?.(m.version, Math.round(performance.now() - started));
      }
      return applied;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    }
  });
}
