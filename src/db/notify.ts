import { sql } from 'kysely';
import type { Executor } from './schema.js';

/**
 * `pg_notify(channel, <current schema> || payload)`: inside a transaction it is delivered when (and
 * only if) the transaction commits. The schema prefix lets apps sharing a database in separate
 * schemas (tests) tell their notifications apart.
 */
export async function notifyInSchema(db: Executor, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, current_schema() || ${payload})`.execute(db);
}

/** `notifyInSchema` for several payloads in one statement (one round trip); nothing for none. */
export async function notifyManyInSchema(db: Executor, channel: string, payloads: string[]): Promise<void> {
  if (payloads.length === 0) return;
  const calls = payloads.map((p) => sql`pg_notify(${channel}, current_schema() || ${p})`);
  await sql`select ${sql.join(calls)}`.execute(db);
}

/** The schema this connection's statements run in. */
export async function currentSchema(db: Executor): Promise<string | undefined> {
  const row = await sql<{ s: string }>`select current_schema() as s`.execute(db);
  return row.rows[0]?.s;
}
