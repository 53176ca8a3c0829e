/**
 * The full wallet sign-in flow, as many browsers at once would run it against Gatehouse in production
 * mode (default logging, to a file) as a child process:
 *   GET /oauth2/authorize → POST /interactions/:id/wallet/challenge → Ed25519-sign the SIWS message
 *   (node:crypto, as the tests' wallets) → POST /interactions/:id/wallet/verify (first-party app: no
 *   consent step; the answer carries the code) → POST /oauth2/token (PKCE) → tokens.
 *   DATABASE_URL=postgres://… node --import tsx bench/signin-flow.ts [--duration 5] [--browsers 50]
 *     [--warmup 10]  (seconds of flows before the measured ones; `BENCH_WARMUP` through `npm run bench`)
 *     [--steps 0]  (after the measured seconds, one browser runs this many flows one after another and
 *     the CPU each step cost the server and PostgreSQL is printed, read from the scheduler's counts)
 * Each browser keeps one wallet (a returning user after its first flow) and starts every flow
 * without cookies. Flows/s
 * counts completed token responses; the server's CPU per flow is read from /proc. The signatures are
 * made in this process, which shares the machine's cores with the server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bs58 from 'bs58';
import { Pool } from 'undici';
import { freePort, numberArg, pct, waitForHttp } from './lib.js';
import { report } from './report.js';
import {
  cpuSeconds,
  dropSchema,
  gatehouseEnv,
  postgresCpuSeconds,
  postgresRuntimeSince,
  postgresRuntimes,
  profileArgs,
  runtimeNs,
  seedGatehouse,
  waitForAllWorkers,
  withWorkers,
} from './seed.js';

const duration = numberArg('duration', 5);
const browsers = numberArg('browsers', 50);
const warmup = numberArg('warmup', Number(process.env.BENCH_WARMUP) || 10);
const steps = numberArg('steps', 0);
const FLOW_CLIENT = 'bench-flow-client';
const REDIRECT = 'https://app.bench.example/callback';

/** A first-party public app (PKCE) of the seeded brand. */
async function seedFlowApp(ctx: import('../src/context.js').AppContext): Promise<void> {
  const now = new Date();
  await ctx.db
    .insertInto('apps')
    .values({
      id: 'app_bench_flow',
      org_id: 'org_bench',
      brand_id: 'brand_bench',
      client_id: FLOW_CLIENT,
      client_secret_hash: null,
      name: 'Bench web app',
      type: 'spa',
      is_confidential: false,
      redirect_uris: [REDIRECT],
      allowed_grant_types: ['authorization_code'],
      allowed_scopes: ['openid', 'profile'],
      enabled: true,
      first_party: true,
      description: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
}

/** One HTTP answer as the browser sees it. */
interface Answer {
  status: number;
  location?: string;
  body: string;
}

/**
 * A browser: its cookie jar and its wallet. Requests go through one keep-alive undici pool shared
 * by all browsers (lighter than `fetch`: the load generator shares the server's two cores, so every
 * microsecond it spends is one the server does not get).
 */
class Browser {
  private readonly jar = new Map<string, string>();
  private readonly key = generateKeyPairSync('ed25519');
  readonly address = bs58.encode(this.key.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  constructor(
    private readonly base: string,
    private readonly pool: Pool,
  ) {}

  private cookie(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private async send(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Answer> {
    const res = await this.pool.request({ method, path, headers, body });
    const setCookie = res.headers['set-cookie'];
    for (const c of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const location = res.headers.location;
    return {
      status: res.statusCode,
      location: Array.isArray(location) ? location[0] : location,
      body: await res.body.text(),
    };
  }
  private async post(path: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await this.send(
      'POST',
      path,
      { 'content-type': 'application/json', cookie: this.cookie(), origin: this.base },
      JSON.stringify(body),
    );
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  }

  /**
   * One whole flow; resolves when the token endpoint has answered with tokens. `mark` is called with
   * each step's name once its answer is in, and with 'start' before the first request.
   */
  async flow(mark: (step: string) => void = () => {}): Promise<void> {
    mark('start');
    // No session from the previous flow (it would answer authorize with a code at once): a returning
    // user signing in again.
    this.jar.clear();
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      client_id: FLOW_CLIENT,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid profile',
      state: randomBytes(8).toString('hex'),
      nonce: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const auth = await this.send('GET', `/oauth2/authorize?${q}`, { cookie: this.cookie() });
    mark('authorize');
    const id = String(auth.location).split('/signin/')[1];
    if (!id) throw new Error(`authorize: ${auth.status} ${auth.location}`);
    const { message } = (await this.post(`/interactions/${id}/wallet/challenge`, {
      address: this.address,
    })) as {
      message: string;
    };
    mark('wallet challenge');
    const signature = sign(null, Buffer.from(message, 'utf8'), this.key.privateKey).toString('base64');
    const done = await this.post(`/interactions/${id}/wallet/verify`, {
      address: this.address,
      signature,
      signedMessage: Buffer.from(message, 'utf8').toString('base64'),
    });
    mark('wallet verify');
    const code = new URL(String(done.redirectTo)).searchParams.get('code');
    if (!code) throw new Error(`verify: ${JSON.stringify(done)}`);
    const token = await this.send(
      'POST',
      '/oauth2/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: FLOW_CLIENT,
        code_verifier: verifier,
      }).toString(),
    );
    mark('token');
    const tokens = JSON.parse(token.body) as { id_token?: string };
    if (token.status !== 200 || !tokens.id_token) throw new Error(`token: ${token.status} ${token.body}`);
  }
}

/**
 * One browser runs `n` flows one after another; prints the CPU each step cost the server (all its
 * threads: the libuv pool's signatures included) and PostgreSQL, on average. Nothing else loads
 * the server meanwhile, so each step's counts are its own.
 */
async function perStep(browser: Browser, pid: number | undefined, n: number): Promise<void> {
  const server = new Map<string, number>();
  const database = new Map<string, number>();
  let s0 = 0;
  let d0 = new Map<string, number>();
  const mark = (step: string) => {
    const s = runtimeNs(pid) ?? 0;
    const d = postgresRuntimes();
    if (step !== 'start') {
      server.set(step, (server.get(step) ?? 0) + s - s0);
      database.set(step, (database.get(step) ?? 0) + postgresRuntimeSince(d0, d));
    }
    s0 = s;
    d0 = d;
  };
  for (let i = 0; i < n; i++) await browser.flow(mark);
  const us = (ns: number | undefined) => ((ns ?? 0) / n / 1000).toFixed(0).padStart(6);
  console.log(`CPU per step, one browser, ${n} flows in a row (µs):  server  PostgreSQL`);
  for (const [step, ns] of server) console.log(`  ${step.padEnd(18)} ${us(ns)}  ${us(database.get(step))}`);
}

/** Every browser runs flows back to back for `seconds`; completed flows, their latencies, errors. */
async function drive(all: Browser[], seconds: number) {
  const until = Date.now() + seconds * 1000;
  const times: number[] = [];
  const errors: string[] = [];
  await Promise.all(
    all.map(async (b) => {
      while (Date.now() < until) {
        const t0 = performance.now();
        try {
          await b.flow();
          times.push(performance.now() - t0);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    }),
  );
  return { times: times.sort((a, b) => a - b), errors };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-flow-'));
  const port = await freePort();
  const env = gatehouseEnv(port, dataDir, 'gh_bench_flow_');
  let child: ChildProcess | undefined;
  let pool: Pool | undefined;
  try {
    await seedGatehouse(env, seedFlowApp);
    const logFile = join(dataDir, 'gatehouse.log');
    const log = openSync(logFile, 'w');
    child = spawn(process.execPath, [...profileArgs(), '--import', 'tsx', 'src/main.ts'], {
      env,
      stdio: ['ignore', log, 'inherit'],
    });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/readyz`);
    await waitForAllWorkers(logFile);
    pool = new Pool(base, { connections: browsers });
    const all = Array.from({ length: browsers }, () => new Browser(base, pool as Pool));
    await all[0].flow(); // fails loudly if the flow is broken
    await drive(all, warmup); // every wallet has its user now, and V8 has compiled the hot paths
    const before = cpuSeconds(child.pid);
    const pgBefore = process.env.DATABASE_URL ? postgresCpuSeconds() : null;
    const selfBefore = process.cpuUsage();
    const started = Date.now();
    const { times, errors } = await drive(all, duration);
    const seconds = (Date.now() - started) / 1000;
    const after = cpuSeconds(child.pid);
    const self = process.cpuUsage(selfBefore);
    const pgAfter = pgBefore === null ? null : postgresCpuSeconds();
    if (errors.length) console.log(`${errors.length} errors, the first: ${errors[0]}`);
    if (times.length === 0) throw new Error('no flow completed');
    const flows = times.length / seconds;
    const cpuUs = before !== null && after !== null ? ((after - before) / times.length) * 1e6 : undefined;
    console.log(
      `${browsers} browsers, ${seconds.toFixed(1)} s: ${times.length} flows, ${flows.toFixed(0)} flows/s, ` +
        `p50 ${pct(times, 50).toFixed(0)} ms, p99 ${pct(times, 99).toFixed(0)} ms, server CPU ${cpuUs?.toFixed(0)} µs/flow, errors ${errors.length}`,
    );
    // Where the machine's CPU went per flow: the server, this load generator (HTTP clients and the
    // wallets' Ed25519 signatures), PostgreSQL (when it runs here).
    const generatorUs = (self.user + self.system) / times.length;
    const databaseUs =
      pgBefore !== null && pgAfter !== null ? ((pgAfter - pgBefore) / times.length) * 1e6 : undefined;
    console.log(
      `CPU per flow: server ${cpuUs?.toFixed(0)} µs, load generator ${generatorUs.toFixed(0)} µs` +
        (databaseUs === undefined ? '' : `, PostgreSQL ${databaseUs.toFixed(0)} µs`),
    );
    report({
      path: withWorkers(`wallet sign-in flow (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'})`),
      figure: flows,
      unit: 'flows/s',
      cpuUs,
      note:
        `${browsers} browsers; p99 ${pct(times, 99).toFixed(0)} ms; ${errors.length} errors; CPU per flow of the load generator ${generatorUs.toFixed(0)} µs` +
        (databaseUs === undefined ? '' : `, of PostgreSQL ${databaseUs.toFixed(0)} µs`),
    });
    if (steps > 0) await perStep(all[0], child.pid, steps);
  } finally {
    await pool?.destroy();
    child?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await dropSchema(env).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
