import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';

/**
 * Kysely over PGlite. PGlite is one connection, so the driver hands it to one Kysely connection at
 * a time: a transaction holds it from BEGIN to COMMIT and nothing else interleaves.
 */
class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.parameters.length === 0 && /;\s*\S/.test(compiled.sql)) {
      // Several statements (migrations): the simple protocol, as node-postgres does without parameters.
      const results = await this.pg.exec(compiled.sql);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as R[] };
    }
    const res = await this.pg.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = res.affectedRows === undefined ? undefined : BigInt(res.affectedRows);
    return { rows: res.rows, numAffectedRows: affected };
  }
  // biome-ignore lint/correctness/useYield: streaming is not supported on PGlite
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite');
  }
}

class PGliteDriver implements Driver {
  private readonly conn: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  constructor(private readonly pg: PGlite) {
    this.conn = new PGliteConnection(pg);
  }
  async init(): Promise<void> {
    await this.pg.waitReady;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((r) => {
      release = r;
    });
    await previous;
    this.release = release;
    return this.conn;
  }
  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(): Promise<void> {
    const r = this.release;
    this.release = null;
    r?.();
  }
  async destroy(): Promise<void> {
    if (!this.pg.closed) await this.pg.close();
  }
}

export class PGliteDialect implements Dialect {
  constructor(private readonly pg: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pg);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}
