// Benchmark: the public token-gate check served from the balance cache, against a bare Fastify JSON
// reply, in the same run with the same load. Run: `node --import tsx bench/token-gates.ts`.
// BENCH_CONNECTIONS (default 50), BENCH_DURATION seconds per measurement (default 5), BENCH_ROUNDS
// (default 7). The targets are measured in turn within each round, so a noisy neighbour hits them
// alike; the ratio reported is the median of the rounds' ratios. The app's own /healthz is measured
// too, as the floor every route of the app pays (its global hooks), to tell it from the check's cost.
// The app runs as users run it: NODE_ENV=production with its default logging (LOG_LEVEL info, a
// line per request), the log going to a file (LOG_LEVEL / LOG_REQUESTS override).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';
import { createGate } from '../src/modules/token-gates/token-gates.service.js';
import { FakeSolanaRpc } from '../test/token-gates/fake-rpc.js';
import { startGatesBench } from './gates-app.js';
import { report } from './report.js';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const duration = Number(process.env.BENCH_DURATION ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
/** BENCH_SHOW=1 prints one raw answer of each server (status line and headers) before measuring. */
const show = process.env.BENCH_SHOW === '1';
const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/** autocannon in a child process, so the load generator does not share the servers' event loop. */
function load(
  url: string,
  seconds: number,
): Promise<{ rps: number; total: number; p99: number; non2xx: number; errors: number }> {
  return new Promise((resolve, reject) => {
    const args = [autocannonBin, '--json', '-c', String(connections), '-d', String(seconds), url];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      const r = JSON.parse(out);
      resolve({
        rps: r.requests.average,
        total: r.requests.total,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
      });
    });
  });
}

const CHECK_PATH = '/identity/organizations/:orgSlug/token-gates/:gateId/check';

/**
 * A bare Fastify server with the check's path and query (so both parse the same request) and a
 * constant reply; with `headers`, it also sends the headers the check's answer carries, so that the
 * bytes on the wire match it.
 */
async function bareServer(headers?: Record<string, string>): Promise<FastifyInstance> {
  const bare = Fastify({ logger: false });
  bare.get(CHECK_PATH, async (_req, reply) => {
    if (headers) reply.headers(headers);
    return { hasAccess: true, balance: '1500', reason: null };
  });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  return bare;
}

async function main() {
  const rpc = await new FakeSolanaRpc().start();
  const bench = await startGatesBench(rpc.url);
  const { ctx, app } = bench;
  const slug = bench.org.slug;

  // One gate, through the service (the mutation path), and a wallet holding the token.
  const mint = rpc.addMint('spl-token');
  const wallet = rpc.addWallet();
  rpc.addTokenAccount(wallet, mint, '1500');
  const gate = await createGate(ctx, bench.org, bench.userId, {
    name: 'Bench',
    mintAddress: mint,
    minHoldings: '1000',
  });

  const bare = await bareServer();
  // The headers of a cached answer beyond Fastify's own: the app's security headers and the Age.
  const sameWire = await bareServer({
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    age: '0',
  });
  const port = (s: FastifyInstance) => (s.server.address() as { port: number }).port;
  const checkUrl = `http://127.0.0.1:${port(app)}/identity/organizations/${slug}/token-gates/${gate.id}/check?walletAddress=${wallet}`;
  const bareUrl = checkUrl.replace(`:${port(app)}/`, `:${port(bare)}/`);
  const sameWireUrl = checkUrl.replace(`:${port(app)}/`, `:${port(sameWire)}/`);

  // Warm the balance cache and both servers.
  const first = await fetch(checkUrl);
  const body = await first.json();
  if (first.status !== 200 || body.hasAccess !== true)
    throw new Error(`warm-up failed: ${JSON.stringify(body)}`);
  const cached = await fetch(checkUrl);
  if (cached.headers.get('age') === null) throw new Error('the second check was not served from the cache');
  if (show) {
    for (const url of [bareUrl, sameWireUrl, checkUrl]) {
      const r = await fetch(url);
      const lines = [url, `HTTP ${r.status}`];
      r.headers.forEach((value, name) => {
        lines.push(`${name}: ${value}`);
      });
      console.log(`${lines.join('\n')}\n\n${await r.text()}\n`);
    }
  }
  await load(checkUrl, 2);
  await load(bareUrl, 2);
  await load(sameWireUrl, 2);
  await load(`http://127.0.0.1:${port(app)}/healthz`, 2);
  const rpcCallsBefore = rpc.totalCalls;

  const healthUrl = `http://127.0.0.1:${port(app)}/healthz`;
  const targets = [
    ['bare', bareUrl],
    ['wire', sameWireUrl],
    ['healthz', healthUrl],
    ['check', checkUrl],
  ] as const;
  type Target = (typeof targets)[number][0];
  const results: Record<Target, number[]> = { bare: [], wire: [], healthz: [], check: [] };
  const ratios: number[] = [];
  // The servers' CPU per answered request (both run in this process; autocannon is a child): less
  // disturbed than req/s when the load generator and the server share two cores.
  const cpuPerRequest: Record<Target, number[]> = { bare: [], wire: [], healthz: [], check: [] };
  for (let i = 0; i < rounds; i++) {
    // Each round starts with another target, so no target always runs right after the same one.
    for (const [name, url] of [
      ...targets.slice(i % targets.length),
      ...targets.slice(0, i % targets.length),
    ]) {
      const cpuBefore = process.cpuUsage();
      const r = await load(url, duration);
      const cpu = process.cpuUsage(cpuBefore);
      if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      results[name].push(r.rps);
      const usPerRequest = (cpu.user + cpu.system) / r.total;
      cpuPerRequest[name].push(usPerRequest);
      console.log(
        `round ${i + 1} ${name.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99} ms  ${usPerRequest.toFixed(1)} µs CPU/request`,
      );
    }
    ratios.push(results.check[i] / results.bare[i]);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  console.log(
    `\n${connections} connections, ${duration} s x ${rounds} rounds, balance cache: ${ctx.redis ? 'Redis' : 'memory'}`,
  );
  console.log(`bare Fastify JSON reply   : ${median(results.bare).toFixed(0)} req/s (median)`);
  console.log(`bare, the check's headers : ${median(results.wire).toFixed(0)} req/s (median)`);
  console.log(`app /healthz (floor)      : ${median(results.healthz).toFixed(0)} req/s (median)`);
  console.log(`cached token-gate check   : ${median(results.check).toFixed(0)} req/s (median)`);
  console.log(`check / bare, per round   : ${ratios.map(pct).join(', ')}`);
  console.log(`check / bare (median)     : ${pct(median(ratios))}`);
  const per = (a: Target, b: Target) => pct(median(results[a].map((x, i) => x / results[b][i])));
  console.log(`check / bare with its headers (median): ${per('check', 'wire')}`);
  console.log(`check / app floor (median): ${per('check', 'healthz')}`);
  const cpu = (name: Target) => median(cpuPerRequest[name]).toFixed(1);
  console.log(
    `server CPU per request (median): bare ${cpu('bare')} µs, bare with the check's headers ${cpu('wire')} µs, /healthz ${cpu('healthz')} µs, check ${cpu('check')} µs`,
  );
  console.log(
    `bare CPU / check CPU      : ${pct(median(cpuPerRequest.bare.map((b, i) => b / cpuPerRequest.check[i])))} (median per round; the throughput the check would reach if CPU-bound)`,
  );
  console.log(`RPC calls during the measurement: ${rpc.totalCalls - rpcCallsBefore}`);
  report({
    path: 'token-gate check, cached (embedded)',
    figure: median(results.check),
    unit: 'req/s',
    peer: 'bare Fastify, same bytes',
    peerFigure: median(results.wire),
    cpuUs: median(cpuPerRequest.check),
    peerCpuUs: median(cpuPerRequest.wire),
    note: 'server and load generator share one process here: CPU/req includes autocannon’s side',
  });

  await bare.close();
  await sameWire.close();
  console.log(
    `log written: ${bench.logBytes()} bytes (level ${ctx.config.logLevel}, requests ${ctx.config.logRequests})`,
  );
  await bench.close();
  await rpc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
