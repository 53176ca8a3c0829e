/**
 * What the benchmarks that start Gatehouse as a child share: the seeded org, brand and confidential
 * app, dropping the schema afterwards, and a process's CPU time from /proc.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';

export const CLIENT_ID = 'bench-client';
export const CLIENT_SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
export const SCOPE = 'orders:read';

/** With BENCH_CPU_PROF=<dir>, the Gatehouse child writes a V8 CPU profile there when it stops. */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * The environment of a Gatehouse child in production mode on `port`: WORKERS as given (1 unset), default logging (a line per
 * request; the caller writes stdout to a file, as a deployment would), the rate limiter running but
 * never refusing, and on DATABASE_URL a fresh schema named from `schemaPrefix`.
 */
export function gatehouseEnv(
  port: number,
  dataDir: string,
  schemaPrefix: string,
): Record<string, string | undefined> {
  return {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    RATE_LIMIT_MULTIPLIER: '1000000',
    // One process unless the run asks for more (WORKERS=2 npm run bench), so figures stay comparable.
    WORKERS: process.env.WORKERS || '1',
    ...(process.env.DATABASE_URL ? { DATABASE_SCHEMA: `${schemaPrefix}${Date.now().toString(36)}` } : {}),
  };
}

/** Creates the Gatehouse schema, a brand and a confidential client-credentials app, then closes. */
export async function seedGatehouse<T = void>(
  env: Record<string, string | undefined>,
  more?: (ctx: import('../src/context.js').AppContext) => Promise<T>,
): Promise<T | undefined> {
  const { loadConfig } = await import('../src/config/index.js');
  const { createContext, closeContext } = await import('../src/wiring.js');
  const { sha256 } = await import('../src/lib/hash.js');
  const ctx = await createContext(
    loadConfig(env as Record<string, string>, () => {}),
    { warn: () => {} },
  );
  const now = new Date();
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('orgs')
      .values({
        id: 'org_bench',
        name: 'Bench',
        slug: 'bench',
        slug_claim: 'bench',
        description: null,
        icon_file_id: null,
        created_by: 'bench',
        payment_product_id: null,
        payment_customer_id: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    await trx
      .insertInto('brands')
      .values({
        id: 'brand_bench',
        org_id: 'org_bench',
        slug: 'bench',
        name: 'Bench',
        oauth_callback_id: 'bench',
        logo_file_id: null,
        primary_color: null,
        support_email: null,
        privacy_policy_url: null,
        terms_url: null,
        provider_order: ['solana'],
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    await trx
      .insertInto('apps')
      .values({
        id: 'app_bench',
        org_id: 'org_bench',
        brand_id: 'brand_bench',
        client_id: CLIENT_ID,
        client_secret_hash: sha256(CLIENT_SECRET),
        name: 'Bench service',
        type: 'service',
        is_confidential: true,
        redirect_uris: [],
        allowed_grant_types: ['client_credentials'],
        allowed_scopes: [SCOPE],
        enabled: true,
        first_party: false,
        description: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
  });
  const extra = more ? await more(ctx) : undefined;
  await closeContext(ctx);
  return extra;
}

export async function dropSchema(env: Record<string, string | undefined>): Promise<void> {
  if (!env.DATABASE_URL || !env.DATABASE_SCHEMA) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
  await client.end();
}

/**
 * CPU seconds (user + system) a process and its live descendants (a cluster's workers, WORKERS > 1)
 * have used so far; null where /proc is not available.
 */
export function cpuSeconds(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')) {
      if (child) seconds += cpuSeconds(Number(child)) ?? 0;
    }
    return seconds;
  } catch {
    return null;
  }
}

/**
 * Nanoseconds on a CPU so far of every thread of `pid` and of its child processes, from the
 * scheduler's own count (`/proc/<pid>/task/<tid>/schedstat`): exact, where `/proc/<pid>/stat` counts
 * in 10 ms ticks. For the CPU of one request, read before and after it. Null without /proc.
 */
export function runtimeNs(pid: number | undefined): number | null {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')) {
      if (child) ns += runtimeNs(Number(child)) ?? 0;
    }
    return ns;
  } catch {
    return null;
  }
}

/**
 * `runtimeNs` of each PostgreSQL process of this machine, by pid. Compare two reads pid by pid:
 * backends and autovacuum workers come and go, so a plain sum can fall between two reads.
 */
export function postgresRuntimes(): Map<string, number> {
  const runtimes = new Map<string, number>();
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)')) continue;
        runtimes.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
      } catch {
        // The process ended between the listing and the read.
      }
    }
  } catch {
    // No /proc: nothing to count.
  }
  return runtimes;
}

/** Nanoseconds PostgreSQL spent between two `postgresRuntimes` reads (a new process: all of its). */
export function postgresRuntimeSince(before: Map<string, number>, after: Map<string, number>): number {
  let ns = 0;
  for (const [pid, now] of after) ns += now - (before.get(pid) ?? 0);
  return ns;
}

/**
 * CPU seconds all PostgreSQL processes of this machine have used so far (backends, WAL writer,
 * checkpointer: every `postgres` process /proc shows); null without /proc. On a machine running
 * nothing else against PostgreSQL, the difference over a run is the database's share of it.
 */
export function postgresCpuSeconds(): number | null {
  try {
    let seconds = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        seconds += (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // The process ended between the listing and the read.
      }
    }
    return seconds;
  } catch {
    return null;
  }
}

/** WORKERS of this run's Gatehouse child (1 unless the run sets more). */
export function benchWorkers(): number {
  return Number(process.env.WORKERS || '1');
}

/** A path's name in the report, with the worker count when the run has several. */
export function withWorkers(path: string): string {
  const n = benchWorkers();
  return n > 1 ? `${path}, ${n} workers` : path;
}

/**
 * With several workers, one answering is not all of them: waits for the one "gatehouse ready" line
 * in the child's log (logged when every worker listens; needs LOG_LEVEL info, the production default).
 */
export async function waitForAllWorkers(logFile: string, timeoutMs = 180_000): Promise<void> {
  if (benchWorkers() <= 1) return;
  const end = Date.now() + timeoutMs;
  while (!(existsSync(logFile) && readFileSync(logFile, 'utf8').includes('gatehouse ready'))) {
    if (Date.now() > end) throw new Error(`no "gatehouse ready" line in ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
