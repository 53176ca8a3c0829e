/**
 * Discovery and JWKS throughput in production mode, with request logging on (LOG_REQUESTS=all, every
 * line written to a log file) and off, against a bare Fastify server sending the same bytes.
 *   node --import tsx bench/wellknown.ts [--duration 5] [--connections 50] [--rounds 3]
 * Uses DATABASE_URL when set (a fresh schema per server, dropped afterwards; else throwaway embedded
 * databases). The rate limiter runs with a multiplier so large that it never refuses. Targets are
 * loaded one at a time, in a rotating order each round; the median of the rounds is reported.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, numberArg, waitForHttp } from './lib.js';
import { report } from './report.js';
import { dropSchema, gatehouseEnv } from './seed.js';

const duration = numberArg('duration', 5);
const connections = numberArg('connections', 50);
const rounds = numberArg('rounds', 3);

function load(url: string, seconds = duration): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: seconds, pipelining: 1 }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const children: ChildProcess[] = [];
  const logs: Record<string, string> = {};
  const envs: Array<Record<string, string | undefined>> = [];
  /** A Gatehouse in production mode (log level info) writing its log to a file. */
  const gatehouse = async (mode: 'all' | 'off') => {
    const port = await freePort();
    logs[mode] = join(dir, `gatehouse-${mode}.log`);
    // A fresh schema on DATABASE_URL, dropped at the end.
    const env = {
      ...gatehouseEnv(port, join(dir, mode), `gh_bench_wk_${mode}_`),
      LOG_LEVEL: 'info',
      LOG_REQUESTS: mode,
    };
    envs.push(env);
    const out = openSync(logs[mode], 'w');
    children.push(
      spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', out, 'inherit'] }),
    );
    await waitForHttp(`http://127.0.0.1:${port}/readyz`);
    return `http://127.0.0.1:${port}`;
  };
  const bare = async (doc: boolean, issuer: string) => {
    const port = await freePort();
    const args = [
      '--import',
      'tsx',
      'bench/bare-server.ts',
      String(port),
      ...(doc ? ['discovery', issuer] : []),
    ];
    children.push(spawn(process.execPath, args, { stdio: 'inherit' }));
    await waitForHttp(`http://127.0.0.1:${port}/`);
    return `http://127.0.0.1:${port}/`;
  };
  try {
    const all = await gatehouse('all');
    const off = await gatehouse('off');
    const targets: Array<[string, string]> = [
      ['bare, same document', await bare(true, all)],
      ['discovery, LOG_REQUESTS=all', `${all}/.well-known/openid-configuration`],
      ['discovery, LOG_REQUESTS=off', `${off}/.well-known/openid-configuration`],
      ['jwks, LOG_REQUESTS=all', `${all}/.well-known/jwks.json`],
      ['jwks, LOG_REQUESTS=off', `${off}/.well-known/jwks.json`],
    ];
    for (const [, url] of targets) await load(url, 2); // warm-up (JIT, caches)
    const samples: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < targets.length; k++) {
        const [name, url] = targets[(k + r) % targets.length];
        const res = await load(url);
        samples[name] = [...(samples[name] ?? []), res.requests.average];
        p99[name] = [...(p99[name] ?? []), res.latency.p99];
        if (res.non2xx) console.log(`${name}: ${res.non2xx} non-2xx answers`);
      }
    }
    const m = (name: string) => median(samples[name]);
    for (const [name] of targets)
      console.log(
        `${name.padEnd(28)} ${m(name).toFixed(0).padStart(7)} req/s (rounds: ${samples[name].map((x) => x.toFixed(0)).join(', ')})  p99 ${median(p99[name])} ms`,
      );
    const pc = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
    console.log(
      `discovery all/off: ${pc(m('discovery, LOG_REQUESTS=all'), m('discovery, LOG_REQUESTS=off'))}`,
    );
    console.log(`jwks all/off:      ${pc(m('jwks, LOG_REQUESTS=all'), m('jwks, LOG_REQUESTS=off'))}`);
    console.log(
      `discovery off / bare same document: ${pc(m('discovery, LOG_REQUESTS=off'), m('bare, same document'))}`,
    );
    for (const path of ['discovery', 'jwks'])
      report({
        path: `${path}, LOG_REQUESTS=all`,
        figure: m(`${path}, LOG_REQUESTS=all`),
        unit: 'req/s',
        peer: path === 'discovery' ? 'bare Fastify, same bytes' : 'same, LOG_REQUESTS=off',
        peerFigure: path === 'discovery' ? m('bare, same document') : m('jwks, LOG_REQUESTS=off'),
      });
    console.log(
      `log written with LOG_REQUESTS=all: ${(statSync(logs.all).size / 1e6).toFixed(1)} MB; off: ${(statSync(logs.off).size / 1e3).toFixed(1)} kB`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    for (const env of envs) await dropSchema(env).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
