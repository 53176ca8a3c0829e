import type pg from 'pg';

/**
 * Named prepared statements on one node-postgres connection (`DATABASE_PREPARED_STATEMENTS`, on by
 * default). Kysely sends each statement as text; PostgreSQL then parses, analyses and plans it
 * again on every execution. Here a statement with parameters gets a name the first time this
 * connection sends it (`g1`, `g2`, …: a counter, so two texts never share a name), and node-postgres
 * sends only Bind/Execute after that: PostgreSQL reuses the parse tree and, once it judges a generic
 * plan good enough, the plan. Statements without parameters (BEGIN, COMMIT) keep the simple protocol.
 *
 * Bounded: at most `limit` names per connection (texts that vary with a list's length would
 * otherwise grow the server's statement cache without end); the rest run unnamed, as before.
 *
 * A migration that changes a table's columns (a rolling deploy: the new instance migrates while this
 * one runs) makes PostgreSQL refuse a prepared `select *` on it with "cached plan must not change
 * result type". That statement's name is then dropped, so the next execution prepares it afresh;
 * outside a transaction the statement is retried at once under its new name (it did nothing), inside
 * one the error stands (the transaction is already aborted) and the request answers 503 with
 * Retry-After (src/db/unavailable.ts), once per connection and statement.
 *
 * Off (`DATABASE_PREPARED_STATEMENTS=off`) for a proxy that cannot carry a connection's named
 * statements (a transaction-mode pooler, which the invalidation channel's LISTEN rules out anyway).
 */
export function prepareStatements(client: pg.ClientBase, limit: number): void {
  const names = new Map<string, string>();
  let counter = 0;
  let inTransaction = false;
  type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;
  const query = client.query.bind(client) as Query;

  const run = async (text: string, values: unknown[], retried: boolean): Promise<unknown> => {
    let name = names.get(text);
    if (name === undefined && names.size < limit) {
      name = `g${++counter}`;
      names.set(text, name);
    }
    if (name === undefined) return query(text, values);
    try {
      return await query({ name, text, values });
    } catch (err) {
      if (!resultTypeChanged(err)) throw err;
      names.delete(text);
      if (inTransaction || retried) throw err;
      return run(text, values, true);
    }
  };

  (client as unknown as { query: Query }).query = (config, values, callback) => {
    if (typeof config === 'string') {
      // Kysely's own transaction statements (a savepoint's `rollback to …` keeps the transaction).
      if (config === 'begin' || config.startsWith('start transaction')) inTransaction = true;
      else if (config === 'commit' || config === 'rollback') inTransaction = false;
      if (Array.isArray(values) && values.length > 0 && callback === undefined)
        return run(config, values, false);
    }
    return query(config, values, callback);
  };
}

/** PostgreSQL's refusal of a cached plan whose result columns a schema change altered (0A000). */
export function resultTypeChanged(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    e?.code === '0A000' &&
    typeof e.message === 'string' &&
    e.message.includes('cached plan must not change result type')
  );
}
