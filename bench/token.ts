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
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, numberArg } from './lib.js';

const duration = numberArg('duration', 10);
const connections = numberArg('connections', 50);
const rounds = numberArg('rounds', 2);

const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const SCOPE = 'orders:read';
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

/** Creates the Gatehouse schema, a brand and a confidential client-credentials app, then closes. */
async function seedGatehouse(env: Record<string, string | undefined>): Promise<void> {
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
  await closeContext(ctx);
}

async function dropSchema(env: Record<string, string | undefined>): Promise<void> {
  if (!env.DATABASE_URL || !env.DATABASE_SCHEMA) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
  await client.end();
}

/** CPU seconds (user + system) a process has used so far; null where /proc is not available. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function line(name: string, r: autocannon.Result): string {
  return `${name.padEnd(14)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-token-'));
  const gatePort = await freePort();
  const oidcPort = await freePort();
  const schema = `gh_bench_${Date.now().toString(36)}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(gatePort),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${gatePort}`,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '1000000',
    ...(process.env.DATABASE_URL ? { DATABASE_SCHEMA: schema } : {}),
  };
  const children: ChildProcess[] = [];
  try {
    await seedGatehouse(env);
    children.push(spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: 'inherit' }));
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
    for (let round = 1; round <= rounds; round++) {
      for (const [name, url, child] of targets) {
        const cpuBefore = cpuSeconds(child.pid);
        const r = await load(url);
        const cpuAfter = cpuSeconds(child.pid);
        const perToken =
          cpuBefore !== null && cpuAfter !== null && r.requests.total > 0
            ? `  server CPU ${(((cpuAfter - cpuBefore) / r.requests.total) * 1e6).toFixed(0)} µs/token`
            : '';
        console.log(`round ${round} ${line(name, r)}${perToken}`);
        best[name] = Math.max(best[name] ?? 0, r.requests.average);
      }
    }
    console.log(
      `ratio gatehouse / oidc-provider (best of ${rounds}): ${(best.gatehouse / best['oidc-provider']).toFixed(2)}x`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await dropSchema(env).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const serveAt = process.argv.indexOf('--serve-oidc-provider');
if (serveAt >= 0) await serveOidcProvider(Number(process.argv[serveAt + 1]));
else await main();
