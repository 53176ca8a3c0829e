/**
 * Client-credentials throughput of Gatehouse against `oidc-provider`, in the same run, with the
 * same load (autocannon, same connections and duration) and the same request:
 *   DATABASE_URL=postgres://… node --import tsx bench/token.ts [--duration 10] [--connections 50] [--rounds 2]
 * Gatehouse runs on DATABASE_URL in a fresh schema (dropped afterwards; without DATABASE_URL, a
 * throwaway embedded database) with RATE_LIMIT_MULTIPLIER so large that the limiter runs but never
 * refuses. oidc-provider runs with its in-memory adapter, a client_credentials client and RS256 JWT
 * access tokens (resourceIndicators). Each server is its own child process; they are loaded in turn.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, numberArg } from './lib.js';
import { report } from './report.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  cpuSeconds,
  dropSchema,
  gatehouseEnv,
  profileArgs,
  SCOPE,
  seedGatehouse,
  waitForAllWorkers,
  withWorkers,
} from './seed.js';

const duration = numberArg('duration', 10);
const connections = numberArg('connections', 50);
const rounds = numberArg('rounds', 2);

const BODY = `grant_type=client_credentials&scope=${encodeURIComponent(SCOPE)}`;
const BASIC = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;

async function tokenOnce(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
  });
}

async function waitForToken(url: string): Promise<void> {
  let last = '';
  for (let i = 0; i < 600; i++) {
    try {
      const res = await tokenOnce(url);
      if (res.ok) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no token from ${url}: ${last}`);
}

function load(url: string, seconds = duration): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        duration: seconds,
        pipelining: 1,
        method: 'POST',
        headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
        body: BODY,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

/** The oidc-provider side, run as a child: `bench/token.ts --serve-oidc-provider <port>`. */
async function serveOidcProvider(port: number): Promise<void> {
  // oidc-provider ships no type declarations; only its constructor and listen() are used here.
  const specifier = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as {
    default: new (
      issuer: string,
      config: Record<string, unknown>,
    ) => { listen(port: number, host: string): void };
  };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' };
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk as never] },
    scopes: [SCOPE],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:bench:api',
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SCOPE,
          audience: 'bench',
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.listen(port, '127.0.0.1');
}

function line(name: string, r: autocannon.Result): string {
  return `${name.padEnd(14)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-token-'));
  const gatePort = await freePort();
  const oidcPort = await freePort();
  const env = gatehouseEnv(gatePort, dataDir, 'gh_bench_');
  const children: ChildProcess[] = [];
  try {
    await seedGatehouse(env);
    const logFile = join(dataDir, 'gatehouse.log');
    const log = openSync(logFile, 'w');
    children.push(
      spawn(process.execPath, [...profileArgs(), '--import', 'tsx', 'src/main.ts'], {
        env,
        stdio: ['ignore', log, 'inherit'],
      }),
    );
    children.push(
      spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/token.ts', '--serve-oidc-provider', String(oidcPort)],
        {
          env: { ...process.env, NODE_ENV: 'production' },
          stdio: ['ignore', 'inherit', 'ignore'],
        },
      ),
    );
    const targets: Array<[string, string, ChildProcess]> = [
      ['gatehouse', `http://127.0.0.1:${gatePort}/oauth2/token`, children[0]],
      ['oidc-provider', `http://127.0.0.1:${oidcPort}/token`, children[1]],
    ];
    for (const [, url] of targets) await waitForToken(url);
    await waitForAllWorkers(logFile);
    for (const [name, url] of targets) {
      const sample = (await (await tokenOnce(url)).json()) as { access_token: string };
      const header = JSON.parse(Buffer.from(sample.access_token.split('.')[0], 'base64url').toString());
      console.log(`${name}: access token ${header.alg} typ ${header.typ}`);
      await load(url, 3); // warm-up (JIT, caches, pools)
    }
    console.log(
      `store: ${env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}; ${connections} connections, ${duration} s per run`,
    );
    const best: Record<string, number> = {};
    const cpuUs: Record<string, number> = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, url, child] of targets) {
        const cpuBefore = cpuSeconds(child.pid);
        const r = await load(url);
        const cpuAfter = cpuSeconds(child.pid);
        const us =
          cpuBefore !== null && cpuAfter !== null && r.requests.total > 0
            ? ((cpuAfter - cpuBefore) / r.requests.total) * 1e6
            : undefined;
        const perToken = us !== undefined ? `  server CPU ${us.toFixed(0)} µs/token` : '';
        console.log(`round ${round} ${line(name, r)}${perToken}`);
        if (r.requests.average > (best[name] ?? 0) && us !== undefined) cpuUs[name] = us;
        best[name] = Math.max(best[name] ?? 0, r.requests.average);
      }
    }
    report({
      path: withWorkers(`client_credentials token (${env.DATABASE_URL ? 'PostgreSQL' : 'embedded'})`),
      figure: best.gatehouse,
      unit: 'req/s',
      peer: 'oidc-provider',
      peerFigure: best['oidc-provider'],
      cpuUs: cpuUs.gatehouse,
      peerCpuUs: cpuUs['oidc-provider'],
    });
    console.log(
      `ratio gatehouse / oidc-provider (best of ${rounds}): ${(best.gatehouse / best['oidc-provider']).toFixed(2)}x`,
    );
  } finally {
    // Each child's exit (a CPU profile is written then), or 10 s at most.
    const exited = children.map(
      (c) =>
        new Promise((r) => {
          if (c.exitCode !== null) r(null);
          else c.once('exit', r);
        }),
    );
    for (const c of children) c.kill('SIGTERM');
    await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, 10_000))]);
    await dropSchema(env).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const serveAt = process.argv.indexOf('--serve-oidc-provider');
if (serveAt >= 0) await serveOidcProvider(Number(process.argv[serveAt + 1]));
else await main();
