import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { listMigrations } from '../../src/db/migrate.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { freePort } from '../helpers/net.js';

/**
 * WORKERS=2 on PostgreSQL + Redis, as a real process tree: one primary, two workers sharing the
 * port; a killed worker is replaced while requests keep succeeding; SIGTERM stops everything.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const KEY = Buffer.alloc(32, 9).toString('base64');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of a process's children (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    const raw = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return raw ? raw.split(' ').map(Number) : [];
  } catch {
    return [];
  }
}

async function until<T>(probe: () => T | Promise<T>, what: string, ms = 120_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One GET on a fresh connection (no keep-alive: each request is handed to a worker anew). */
function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

type Line = Record<string, unknown>;

/** The JWKS requests answered 2xx, as the metrics listener on `port` counts them. */
async function jwksCount(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('gatehouse_http_request_duration_seconds_count{') && /jwks/i.test(line))
      if (line.includes('status_class="2xx"')) sum += Number(line.split(' ').pop());
  }
  return sum;
}

const skip =
  !process.env.DATABASE_URL || !process.env.REDIS_URL
    ? 'needs DATABASE_URL and REDIS_URL: several workers need PostgreSQL and Redis'
    : false;

describe('WORKERS=2 (cluster mode)', { skip }, () => {
  it('two workers answer, a killed one is replaced while requests succeed, SIGTERM stops all', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const schema = `gh_workers_${randomAlphanumeric(8).toLowerCase()}`;
    const primary: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      detached: true,
      env: { ...workerEnv(port, schema), METRICS_PORT: String(metricsPort) },
    });
    const pid = primary.pid as number;
    let out = '';
    primary.stdout?.on('data', (d) => (out += d));
    primary.stderr?.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => primary.on('exit', (code) => r(code)));
    const lines = (): Line[] =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    const url = `http://127.0.0.1:${port}/.well-known/jwks.json`;
    let answered = 0;
    const jwks = async () => {
      assert.equal(await status(url), 200);
      answered++;
    };
    /** Requests until `want` distinct pids have logged answering them. */
    const answeredBy = async (want: number[]) => {
      await until(
        async () => {
          await jwks();
          const pids = new Set(
            lines()
              .filter((l) => l.route === '/.well-known/jwks.json')
              .map((l) => l.pid),
          );
          return want.every((p) => pids.has(p));
        },
        `workers ${want.join(', ')} to answer (${out})`,
      );
    };
    try {
      await until(() => out.includes('gatehouse ready'), 'the ready line', 180_000);
      const ready = lines().filter((l) => l.msg === 'gatehouse ready');
      assert.equal(ready.length, 1, out);
      assert.equal(ready[0].workers, 2);
      assert.equal(ready[0].pid, pid, 'the primary says it is ready');
      // Migrated once, by the primary, before forking.
      const migrations = lines().filter((l) => l.msg === 'migration applied');
      assert.deepEqual(
        migrations.map((l) => l.version),
        listMigrations().map((m) => m.version),
      );
      assert.ok(migrations.every((l) => l.pid === pid));

      const workers = childrenOf(pid);
      assert.equal(workers.length, 2, `two workers: ${workers}`);
      await answeredBy(workers);
      // The primary's /metrics sums the workers' (each saw only its share of the requests).
      await until(async () => (await jwksCount(metricsPort)) === answered, `/metrics to count ${answered}`);

      const [victim, survivor] = workers;
      process.kill(victim, 'SIGKILL');
      await until(
        () => lines().some((l) => l.msg === 'worker exited; starting another' && l.pid === victim),
        'the primary to see the worker gone',
      );
      for (let i = 0; i < 10; i++) await jwks();
      const replacement = await until(
        () => childrenOf(pid).find((p) => p !== survivor && p !== victim && alive(p)),
        'a replacement worker',
      );
      await answeredBy([survivor, replacement]);
      assert.equal(lines().filter((l) => l.msg === 'gatehouse ready').length, 1);

      process.kill(pid, 'SIGTERM');
      assert.equal(await exited, 0);
      await until(() => !alive(survivor) && !alive(replacement), 'every worker to end', 20_000);
      const stopped = lines().filter((l) => l.msg === 'shutting down');
      assert.ok(
        stopped.some((l) => l.pid === pid && l.signal === 'SIGTERM'),
        out,
      );
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await dropSchema(schema);
    }
  });

  it('a port in use stops the start with one line, not one per worker', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as AddressInfo).port;
    const schema = `gh_workers_${randomAlphanumeric(8).toLowerCase()}`;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: { ...workerEnv(port, schema), LOG_LEVEL: 'silent' },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      assert.equal(code, 1);
      assert.match(
        stderr,
        /^Invalid configuration: PORT \d+ on HOST 127.0.0.1 cannot be used \(EADDRINUSE\)\n$/,
      );
    } finally {
      blocker.close();
      await dropSchema(schema);
    }
  });
});

function workerEnv(port: number, schema: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    ENCRYPTION_KEY: KEY,
    DATA_DIR: '/nonexistent-gatehouse-workers',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATABASE_SCHEMA: schema,
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `${schema}:`,
    RATE_LIMIT_MULTIPLIER: '1000',
    WORKERS: '2',
  };
}

async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  await c.query(`drop schema if exists ${schema} cascade`);
  await c.end();
}
