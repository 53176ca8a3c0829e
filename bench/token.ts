/**
 * Client-credentials throughput of Gatehouse against `oidc-provider`, in the same run, with the
 * same load (autocannon, same connections and duration) and the same request:
 *   DATABASE_URL=postgres://… node --import tsx bench/token.ts [--duration 10] [--connections 50] [--rounds 2] [--warmup 20]
 * Gatehouse runs on DATABASE_URL in a fresh schema (dropped afterwards; without DATABASE_URL, a
 * throwaway embedded database) with RATE_LIMIT_MULTIPLIER so large that the limiter runs but never
 * refuses. oidc-provider runs with its in-memory adapter, a client_credentials client and RS256 JWT
 * access tokens (resourceIndicators). The bare signer (`serveBareSigner`) is the floor under both.
 * Each server is its own child process; each is warmed up, then they are loaded in turn.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign as cryptoSign, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
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
// Seconds of load on each server before its measured rounds, the same for all three. Gatehouse's
// CPU per token falls for its first ~20 s under load (V8 optimizing on a background thread that
// competes for the same two cores), so a shorter warm-up measures the JIT (bench/README.md).
const warmup = numberArg('warmup', Number(process.env.BENCH_WARMUP) || 20);

const BARE = 'bare signer';
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

/**
 * The floor under any token server on this machine, run as a child: `bench/token.ts
 * --serve-bare-signer <port>`. A bare Fastify route (no logging, no database, no rate limit) that
 * checks the Basic credentials and the grant, signs an access token of the same claims and size as
 * Gatehouse's with one RS256 `crypto.sign` on the libuv pool (as Gatehouse signs) and answers the
 * same JSON. Between the RS256 limit and this server lie only HTTP and the load generator, which
 * every server pays; between this server and Gatehouse lies what Gatehouse itself does per token.
 */
async function serveBareSigner(port: number): Promise<void> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const expected = Buffer.from(BASIC);
  const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const header = b64json({ alg: 'RS256', kid: 'bench-0123456789abcdef', typ: 'at+jwt' });
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, new URLSearchParams(body as string)),
  );
  app.post('/oauth2/token', async (req, reply) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    const form = req.body as URLSearchParams;
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return reply.code(401).send({ error: 'invalid_client' });
    if (form.get('grant_type') !== 'client_credentials' || form.get('scope') !== SCOPE)
      return reply.code(400).send({ error: 'invalid_request' });
    const iat = Math.floor(Date.now() / 1000);
    const claims = {
      iss: `http://127.0.0.1:${port}`,
      sub: CLIENT_ID,
      aud: 'bench-brand',
      org: 'bench-org',
      client_id: CLIENT_ID,
      scope: SCOPE,
      jti: randomUUID(),
      iat,
      exp: iat + 3600,
    };
    const input = `${header}.${b64json(claims)}`;
    const signature = await new Promise<Buffer>((resolve, reject) =>
      cryptoSign('sha256', Buffer.from(input), privateKey, (err, sig) => (err ? reject(err) : resolve(sig))),
    );
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return {
      access_token: `${input}.${signature.toString('base64url')}`,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: SCOPE,
    };
  });
  await app.listen({ port, host: '127.0.0.1' });
}

/** A peer server of the comparison, this script run as a child in production mode. */
function peer(flag: string, port: number, stderr: 'inherit' | 'ignore'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'bench/token.ts', flag, String(port)], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', stderr],
  });
}

function line(name: string, r: autocannon.Result): string {
  return `${name.padEnd(14)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-token-'));
  const gatePort = await freePort();
  const oidcPort = await freePort();
  const barePort = await freePort();
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
    // oidc-provider's start-up notices go to its stderr, which is dropped.
    children.push(
      peer('--serve-oidc-provider', oidcPort, 'ignore'),
      peer('--serve-bare-signer', barePort, 'inherit'),
    );
    const targets: Array<[string, string, ChildProcess]> = [
      ['gatehouse', `http://127.0.0.1:${gatePort}/oauth2/token`, children[0]],
      ['oidc-provider', `http://127.0.0.1:${oidcPort}/token`, children[1]],
      [BARE, `http://127.0.0.1:${barePort}/oauth2/token`, children[2]],
    ];
    for (const [, url] of targets) await waitForToken(url);
    await waitForAllWorkers(logFile);
    for (const [name, url] of targets) {
      const sample = (await (await tokenOnce(url)).json()) as { access_token: string };
      const header = JSON.parse(Buffer.from(sample.access_token.split('.')[0], 'base64url').toString());
      console.log(`${name}: access token ${header.alg} typ ${header.typ}`);
      await load(url, warmup); // JIT, caches, pools
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
    const path = withWorkers(`client_credentials token (${env.DATABASE_URL ? 'PostgreSQL' : 'embedded'})`);
    const ours = { figure: best.gatehouse, unit: 'req/s', cpuUs: cpuUs.gatehouse };
    const oidc = {
      peer: 'oidc-provider',
      peerFigure: best['oidc-provider'],
      peerCpuUs: cpuUs['oidc-provider'],
    };
    report(
      { path, ...ours, ...oidc },
      { path: `${path} vs ${BARE}`, ...ours, peer: BARE, peerFigure: best[BARE], peerCpuUs: cpuUs[BARE] },
      // The most any token server could reach here against the goal of 1.6× oidc-provider.
      {
        path: `${BARE} (one RS256 a request, nothing else)`,
        figure: best[BARE],
        unit: 'req/s',
        cpuUs: cpuUs[BARE],
        ...oidc,
      },
    );
    for (const peer of ['oidc-provider', BARE])
      console.log(
        `ratio gatehouse / ${peer} (best of ${rounds}): ${(best.gatehouse / best[peer]).toFixed(2)}x`,
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
const bareAt = process.argv.indexOf('--serve-bare-signer');
if (serveAt >= 0) await serveOidcProvider(Number(process.argv[serveAt + 1]));
else if (bareAt >= 0) await serveBareSigner(Number(process.argv[bareAt + 1]));
else await main();
