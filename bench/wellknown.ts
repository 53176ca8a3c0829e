/**
 * Discovery and JWKS throughput against a bare Fastify JSON reply, in the same run, same load.
 *   node --import tsx bench/wellknown.ts [--duration 10] [--connections 50]
 * Uses DATABASE_URL when set (else a throwaway embedded database). The rate limiter runs with a
 * multiplier so large that it never refuses.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, numberArg, waitForHttp } from './lib.js';

const duration = numberArg('duration', 10);
const connections = numberArg('connections', 50);

function load(url: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, pipelining: 1 }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const gatePort = await freePort();
  const barePort = await freePort();
  const sameDocPort = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(gatePort),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${gatePort}`,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '1000000',
  };
  const children: ChildProcess[] = [];
  try {
    children.push(spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: 'inherit' }));
    children.push(
      spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', String(barePort)], {
        stdio: 'inherit',
      }),
    );
    children.push(
      spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/bare-server.ts', String(sameDocPort), 'discovery', env.BASE_URL],
        { stdio: 'inherit' },
      ),
    );
    await waitForHttp(`http://127.0.0.1:${gatePort}/readyz`);
    await waitForHttp(`http://127.0.0.1:${barePort}/`);
    await waitForHttp(`http://127.0.0.1:${sameDocPort}/`);

    const targets: Array<[string, string]> = [
      ['bare Fastify JSON', `http://127.0.0.1:${barePort}/`],
      ['bare, same doc', `http://127.0.0.1:${sameDocPort}/`],
      ['discovery', `http://127.0.0.1:${gatePort}/.well-known/openid-configuration`],
      ['jwks', `http://127.0.0.1:${gatePort}/.well-known/jwks.json`],
    ];
    for (const [, url] of targets) await load(url.replace(/$/, '')); // warm-up pass (JIT, caches)
    const results: Record<string, number> = {};
    for (const [name, url] of targets) {
      const r = await load(url);
      results[name] = r.requests.average;
      console.log(
        `${name.padEnd(18)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}`,
      );
    }
    const ratio = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
    const bare = results['bare Fastify JSON'];
    const sameDoc = results['bare, same doc'];
    console.log(`discovery / bare hello-world: ${ratio(results.discovery, bare)}`);
    console.log(`jwks / bare hello-world:      ${ratio(results.jwks, bare)}`);
    console.log(`discovery / bare same document: ${ratio(results.discovery, sameDoc)}`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
