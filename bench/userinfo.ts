/**
 * `/userinfo` with a valid access token (RS256, `profile` scope) against a bare Fastify server sending
 * the same bytes, in the same run and with the same load:
 *   DATABASE_URL=postgres://… node --import tsx bench/userinfo.ts [--duration 5] [--connections 50] [--rounds 1]
 * Gatehouse runs in production mode (default logging, to a file) as a child process on DATABASE_URL
 * in a fresh schema (dropped afterwards; without it, a throwaway embedded database). The token is
 * minted with the instance's own signing key for a seeded user and confidential app, as the issuer
 * would; every request verifies it and runs the revocation and user lookups.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, numberArg, waitForHttp } from './lib.js';
import { report } from './report.js';
import { CLIENT_ID, cpuSeconds, dropSchema, gatehouseEnv, profileArgs, seedGatehouse } from './seed.js';

const duration = numberArg('duration', 5);
const connections = numberArg('connections', 50);
const rounds = numberArg('rounds', 1);

function load(url: string, token: string, seconds = duration): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections, duration: seconds, pipelining: 1, headers: { authorization: `Bearer ${token}` } },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

/** A user with a profile, and an access token for them from the seeded app. */
async function mintToken(ctx: import('../src/context.js').AppContext): Promise<string> {
  const { signJwt } = await import('../src/oidc/jwt.js');
  const now = new Date();
  await ctx.db
    .insertInto('users')
    .values({
      id: 'usr_bench',
      username: 'bench-user',
      first_name: 'Bench',
      last_name: 'User',
      last_seen: now,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    } as never)
    .execute();
  return signJwt(
    ctx.keys,
    ctx.clock,
    {
      iss: ctx.config.issuer,
      sub: 'usr_bench',
      aud: 'brand_bench',
      client_id: CLIENT_ID,
      scope: 'openid profile',
      jti: `jti_bench_${Date.now()}`,
    },
    { ttl: 3600, typ: 'at+jwt' },
  );
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-userinfo-'));
  const port = await freePort();
  const barePort = await freePort();
  const env = gatehouseEnv(port, dataDir, 'gh_bench_ui_');

  const children: ChildProcess[] = [];
  try {
    const token = (await seedGatehouse(env, mintToken)) as string;
    const log = openSync(join(dataDir, 'gatehouse.log'), 'w');
    children.push(
      spawn(process.execPath, [...profileArgs(), '--import', 'tsx', 'src/main.ts'], {
        env,
        stdio: ['ignore', log, 'inherit'],
      }),
    );
    const url = `http://127.0.0.1:${port}/userinfo`;
    await waitForHttp(`http://127.0.0.1:${port}/readyz`);
    const sample = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await sample.text();
    if (!sample.ok) throw new Error(`userinfo answered ${sample.status} ${body}`);
    console.log(`userinfo: ${body}`);
    children.push(
      spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/bare-server.ts', String(barePort), 'body', '/userinfo'],
        {
          env: { ...process.env, NODE_ENV: 'production', BENCH_BARE_BODY: body },
          stdio: 'inherit',
        },
      ),
    );
    await waitForHttp(`http://127.0.0.1:${barePort}/`);
    const targets: Array<[string, string, ChildProcess]> = [
      ['gatehouse', url, children[0]],
      ['bare', `http://127.0.0.1:${barePort}/userinfo`, children[1]],
    ];
    for (const [, u] of targets) await load(u, token, 2); // warm-up
    const best: Record<string, { rps: number; us?: number }> = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, u, child] of targets) {
        const before = cpuSeconds(child.pid);
        const r = await load(u, token);
        const after = cpuSeconds(child.pid);
        const us =
          before !== null && after !== null ? ((after - before) / r.requests.total) * 1e6 : undefined;
        console.log(
          `round ${round} ${name.padEnd(10)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}  CPU ${us?.toFixed(0)} µs/req`,
        );
        if (r.requests.average > (best[name]?.rps ?? 0)) best[name] = { rps: r.requests.average, us };
      }
    }
    report({
      path: `/userinfo, valid token (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'})`,
      figure: best.gatehouse.rps,
      unit: 'req/s',
      peer: 'bare Fastify, same bytes',
      peerFigure: best.bare.rps,
      cpuUs: best.gatehouse.us,
      peerCpuUs: best.bare.us,
    });
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await dropSchema(env).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
