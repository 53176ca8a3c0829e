/**
 * `npm run bench`: every benchmark of bench/ in production mode, one after the other, then one table
 * (bench/report.ts) of each path's figure beside its peer or limit measured in the same run, the
 * ratio, and server CPU per request. First it measures the RS256 signing limit of this machine (every
 * core signing on the libuv pool, as the issuer signs), the ceiling of a token (one signature) and of
 * a sign-in flow (two).
 *   BENCH_DURATION   seconds per measured path (default 5)
 *   BENCH_ONLY       comma-separated script names to run (default: all), e.g. token,userinfo
 *   DATABASE_URL     PostgreSQL for every script (the audit log needs it; others fall back to the
 *                    embedded database without it)
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchRow, formatTable, parseReport, withSigningLimit } from './report.js';

const duration = process.env.BENCH_DURATION ?? '5';
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const pg = !!process.env.DATABASE_URL;

interface Step {
  name: string;
  args: string[];
  env?: Record<string, string>;
  needsPostgres?: boolean;
}

const steps: Step[] = [
  { name: 'token', args: ['--duration', duration, '--rounds', '1'] },
  { name: 'signin-flow', args: ['--duration', duration] },
  { name: 'userinfo', args: ['--duration', duration, '--rounds', '1'] },
  { name: 'wellknown', args: ['--duration', duration, '--rounds', '1'] },
  { name: 'token-gates', args: [], env: { BENCH_DURATION: duration, BENCH_ROUNDS: '1' } },
  { name: 'gates-bulk', args: [], env: { BENCH_ROUNDS: '1' } },
  { name: 'webhooks', args: [], env: { BENCH_EVENTS: '3000', BENCH_PACED_EVENTS: '1000' } },
  { name: 'audit-log', args: [], env: { BENCH_REQUESTS: '100' }, needsPostgres: true },
];

/**
 * RS256-2048 signatures per second with every core busy (callback `crypto.sign`: the libuv pool, as
 * the issuer signs), and the CPU one signature costs (steadier than the rate on a shared machine).
 */
async function rs256Limit(seconds: number): Promise<{ perSecond: number; cpuUs: number }> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const data = Buffer.alloc(300, 1);
  const one = () =>
    new Promise<void>((resolve, reject) =>
      sign('sha256', data, privateKey, (err) => (err ? reject(err) : resolve())),
    );
  let count = 0;
  const until = Date.now() + seconds * 1000;
  const lane = async () => {
    while (Date.now() < until) {
      await one();
      count++;
    }
  };
  const start = Date.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: 4 * availableParallelism() }, lane));
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: count / ((Date.now() - start) / 1000), cpuUs: (cpu.user + cpu.system) / count };
}

function run(step: Step, reportFile: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${step.name}.ts`, ...step.args], {
      env: { ...process.env, ...step.env, BENCH_REPORT: reportFile },
      stdio: 'inherit',
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-run-'));
  const file = join(dir, 'report.jsonl');
  const load0 = loadavg()[0];
  const started = Date.now();
  const failed: string[] = [];
  try {
    // Measured before and after the load (the better of the two: the machine may be shared).
    const before = await rs256Limit(Math.min(5, Number(duration)));
    console.log(
      `RS256 signing limit: ${before.perSecond.toFixed(0)} signatures/s on ${availableParallelism()} cores`,
    );
    for (const step of steps) {
      if (only && !only.includes(step.name)) continue;
      if (step.needsPostgres && !pg) {
        console.log(`\n== ${step.name}: skipped (needs DATABASE_URL)`);
        continue;
      }
      console.log(`\n== ${step.name}`);
      const code = await run(step, file);
      if (code !== 0) failed.push(`${step.name} (exit ${code})`);
    }
    const after = await rs256Limit(Math.min(5, Number(duration)));
    const best = after.perSecond > before.perSecond ? after : before;
    const rs256 = best.perSecond;
    const rows: BenchRow[] = [
      {
        path: `RS256 signing limit (${availableParallelism()} cores)`,
        figure: rs256,
        unit: 'signatures/s',
        cpuUs: best.cpuUs,
        note: `before the load ${before.perSecond.toFixed(0)}/s, after ${after.perSecond.toFixed(0)}/s; its CPU column is one signature`,
      },
    ];
    rows.push(...withSigningLimit(parseReport(readFileSync(file, { encoding: 'utf8', flag: 'a+' })), rs256));
    console.log(
      `\nnpm run bench: ${((Date.now() - started) / 1000).toFixed(0)} s, ${duration} s per path, NODE_ENV=production, ` +
        `${pg ? 'PostgreSQL' : 'embedded database'}; load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}\n`,
    );
    console.log(formatTable(rows));
    if (failed.length) console.log(`\nfailed: ${failed.join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (failed.length) process.exitCode = 1;
}

await main();
