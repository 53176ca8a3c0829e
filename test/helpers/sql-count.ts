import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { TestApp } from './app.js';

/** One SQL statement sent to the database, and what it does. */
export interface Statement {
  sql: string;
  kind: 'read' | 'write' | 'tx';
}

const current = new AsyncLocalStorage<Statement[] | undefined>();
/** The lists of the `counted` calls running, by the id their requests carry in COUNT_HEADER. */
const running = new Map<string, Statement[]>();
const COUNT_HEADER = 'x-test-count-sql';
let nextId = 0;

/** What a statement does: transaction control, a write (also inside a CTE), or a read. */
export function classify(text: string): Statement['kind'] {
  const s = text.trim().toLowerCase();
  if (/^(begin|commit|rollback|savepoint|release)\b/.test(s)) return 'tx';
  if (/^(insert|update|delete)\b/.test(s)) return 'write';
  if (/^with\b/.test(s) && /\b(insert\s+into|update\s+"?\w+"?\s+set|delete\s+from)\b/.test(s)) return 'write';
  return 'read';
}

function record(text: unknown): void {
  const list = current.getStore();
  if (list && typeof text === 'string') list.push({ sql: text, kind: classify(text) });
}

/**
 * Pass as buildTestApp's `routes`: a request carrying COUNT_HEADER runs in the async context of its
 * `counted` call's list (inject does not keep the caller's context: the request starts from
 * Fastify's ready queue), every other request in none.
 */
export function sqlCounterHook(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const id = req.headers[COUNT_HEADER];
    current.enterWith(typeof id === 'string' ? running.get(id) : undefined);
    done();
  });
}

/**
 * Records every statement the app sends for the requests of `counted`, whichever database it is on:
 * PGlite's `query`/`exec` of this app's instance here; node-postgres' `Client.prototype.query` (every
 * pooled connection) is patched when this module loads (below). The background jobs' sweeps and the
 * webhook worker's polls are not counted.
 */
export function installSqlCounter(t: TestApp): void {
  const pglite = t.ctx.database.pglite;
  if (pglite) {
    const query = pglite.query.bind(pglite);
    const exec = pglite.exec.bind(pglite);
    pglite.query = ((text: string, ...rest: unknown[]) => {
      record(text);
      return (query as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof pglite.query;
    pglite.exec = ((text: string, ...rest: unknown[]) => {
      record(text);
      return (exec as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof pglite.exec;
  }
}

/**
 * node-postgres: patched when this module loads, before any app of the test file connects. A pooled
 * connection's `query` is bound when it connects (src/db/prepared.ts keeps the method it found then),
 * so a patch made later would miss every connection already open and count nothing on PostgreSQL.
 */
function patchNodePostgres(): void {
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  pg.Client.prototype.query = function patched(this: pg.Client, config: unknown, ...rest: unknown[]) {
    record(typeof config === 'string' ? config : (config as { text?: string } | null)?.text);
    return query.call(this, config, ...rest);
  } as typeof pg.Client.prototype.query;
}
patchNodePostgres();

/**
 * Runs `fn`, whose requests send `headers`; returns its result and the statements they sent, until
 * `fn` resolved.
 */
export async function counted<T>(
  fn: (headers: Record<string, string>) => Promise<T>,
): Promise<{ result: T; statements: Statement[] }> {
  const id = String(++nextId);
  const statements: Statement[] = [];
  running.set(id, statements);
  try {
    const result = await fn({ [COUNT_HEADER]: id });
    return { result, statements: [...statements] };
  } finally {
    running.delete(id);
  }
}

/** Statements, writes and transaction statements of a list. */
export function tally(statements: Statement[]): { statements: number; writes: number; tx: number } {
  return {
    statements: statements.length,
    writes: statements.filter((s) => s.kind === 'write').length,
    tx: statements.filter((s) => s.kind === 'tx').length,
  };
}
