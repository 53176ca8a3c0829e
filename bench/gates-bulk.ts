// Benchmark: the bulk token-gate check, cold (no balance cached), 100 wallets × 5 gates of the
// three kinds, against a fake Solana RPC in another process answering every call after 20 ms; then
// what `attest=true` costs (500 signatures cold, 2,000 on a warm 100 × 20). Run:
// `node --import tsx bench/gates-bulk.ts`. BENCH_ROUNDS (default 5), RPC_LATENCY_MS (default 20).
// Each round uses wallets no earlier request has read, so every pair is read from the chain. The
// peer measured in the same run is one bare RPC round trip to the same node.
import { type ChildProcess, fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import { WRAPPED_SOL_MINT } from '../src/solana/metadata.js';
import { createGate } from '../src/modules/token-gates/token-gates.service.js';
import { startGatesBench } from './gates-app.js';
import { report } from './report.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const WALLETS = 100;

interface Seeded {
  url: string;
  wallets: string[];
  mints: { token: string; token2022: string; other: string; collection: string };
}

/** The fake node in a child process, and a way to read (and reset) its call counts. */
async function startRpc(
  wallets: number,
): Promise<{ child: ChildProcess; seeded: Seeded; calls(): Promise<Record<string, number>> }> {
  const child = fork(new URL('./gates-rpc-child.ts', import.meta.url).pathname, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, WALLETS: String(wallets) },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fake RPC exited with ${code}`)));
  });
  const calls = () =>
    new Promise<Record<string, number>>((resolve) => {
      child.once('message', (m) => resolve((m as { calls: Record<string, number> }).calls));
      child.send({ calls: true });
    });
  return { child, seeded: JSON.parse(line) as Seeded, calls };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function main() {
  // Per round: a fresh slice for the plain cold bulk and another for the attested cold bulk.
  const rpc = await startRpc(WALLETS * 2 * rounds + 10);
  const { url, wallets, mints } = rpc.seeded;
  const bench = await startGatesBench(url);
  const { ctx, org, userId } = bench;
  const gate = (kind: 'token' | 'collection' | 'sol', mintAddress: string, minHoldings: string) =>
    createGate(ctx, org, userId, { name: `${kind} ${minHoldings}`, kind, mintAddress, minHoldings }).then(
      (g) => g.id,
    );
  const five = [
    await gate('token', mints.token, '1000'),
    await gate('token', mints.token2022, '1'),
    await gate('sol', WRAPPED_SOL_MINT, '2500000'),
    await gate('collection', mints.collection, '1'),
    await gate('token', mints.other, '1'),
  ];
  // 20 gates over the same five holdings (other thresholds): a warm 100 × 20 reads nothing.
  const twenty = [...five];
  for (let i = 1; twenty.length < 20; i++) twenty.push(await gate('token', mints.token, String(i * 100)));

  const port = (bench.app.server.address() as { port: number }).port;
  const bulkUrl = `http://127.0.0.1:${port}/identity/organizations/${org.slug}/token-gates/check`;
  async function bulk(ws: string[], gateIds: string[], attest = false) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const res = await fetch(`${bulkUrl}${attest ? '?attest=true' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ walletAddresses: ws, gateIds }),
    });
    const body = (await res.json()) as { results: Array<{ attestation?: string }> };
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (res.status !== 200) throw new Error(`bulk: HTTP ${res.status} ${JSON.stringify(body)}`);
    if (body.results.length !== ws.length * gateIds.length) throw new Error('bulk: wrong result count');
    if (attest && body.results.some((r) => !r.attestation)) throw new Error('bulk: missing attestation');
    return { ms, cpuMs: (used.user + used.system) / 1000 };
  }
  async function rpcRoundTrip(): Promise<number> {
    const started = performance.now();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'getAccountInfo',
        params: [wallets[0], { encoding: 'base64' }],
      }),
    });
    await res.text();
    return performance.now() - started;
  }

  // Warm-up: the app's code paths and the connections to the node, on wallets not measured later.
  const spare = wallets.slice(WALLETS * 2 * rounds);
  await bulk(spare, five);
  await bulk(spare, five, true);
  await rpcRoundTrip();
  await rpc.calls();

  const rows: Record<string, number[]> = {
    rtt: [],
    cold: [],
    coldCpu: [],
    coldAttest: [],
    coldAttestCpu: [],
    warm20: [],
    warm20Cpu: [],
    warm20Attest: [],
    warm20AttestCpu: [],
  };
  let calls: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    const plain = wallets.slice(WALLETS * 2 * r, WALLETS * 2 * r + WALLETS);
    const attested = wallets.slice(WALLETS * 2 * r + WALLETS, WALLETS * 2 * (r + 1));
    rows.rtt.push(await rpcRoundTrip());
    await rpc.calls();
    const cold = await bulk(plain, five);
    calls = await rpc.calls();
    const coldAttest = await bulk(attested, five, true);
    const warm = await bulk(plain, twenty);
    const warmAttest = await bulk(plain, twenty, true);
    const warmCalls = await rpc.calls();
    rows.cold.push(cold.ms);
    rows.coldCpu.push(cold.cpuMs);
    rows.coldAttest.push(coldAttest.ms);
    rows.coldAttestCpu.push(coldAttest.cpuMs);
    rows.warm20.push(warm.ms);
    rows.warm20Cpu.push(warm.cpuMs);
    rows.warm20Attest.push(warmAttest.ms);
    rows.warm20AttestCpu.push(warmAttest.cpuMs);
    console.log(
      `round ${r + 1}: RPC round trip ${rows.rtt[r]?.toFixed(1)} ms | cold 100×5 ${cold.ms.toFixed(0)} ms (${cold.cpuMs.toFixed(0)} ms CPU) | ` +
        `cold 100×5 attest ${coldAttest.ms.toFixed(0)} ms | warm 100×20 ${warm.ms.toFixed(0)} ms | warm 100×20 attest ${warmAttest.ms.toFixed(0)} ms (${warmAttest.cpuMs.toFixed(0)} ms CPU)` +
        ` | RPC calls: cold ${Object.values(calls).reduce((a, b) => a + b, 0)}, attested cold + warm ${Object.values(warmCalls).reduce((a, b) => a + b, 0)}`,
    );
  }
  const m = (k: string) => median(rows[k] as number[]);
  console.log(
    `\n${rounds} rounds, RPC latency ${process.env.RPC_LATENCY_MS ?? 20} ms, log level ${ctx.config.logLevel}, requests logged: ${ctx.config.logRequests}`,
  );
  console.log(`one bare RPC round trip (peer)     : ${m('rtt').toFixed(1)} ms`);
  console.log(
    `cold bulk 100 × 5                   : ${m('cold').toFixed(0)} ms (median; goal < 1,000), ${(m('cold') / m('rtt')).toFixed(1)} RPC round trips, ${m('coldCpu').toFixed(0)} ms CPU`,
  );
  console.log(`RPC calls of one cold bulk          : ${JSON.stringify(calls)}`);
  console.log(
    `cold bulk 100 × 5, attest=true      : ${m('coldAttest').toFixed(0)} ms (500 signatures), ${m('coldAttestCpu').toFixed(0)} ms CPU`,
  );
  console.log(
    `warm bulk 100 × 20                  : ${m('warm20').toFixed(0)} ms, ${m('warm20Cpu').toFixed(0)} ms CPU`,
  );
  console.log(
    `warm bulk 100 × 20, attest=true     : ${m('warm20Attest').toFixed(0)} ms (2,000 signatures), ${m('warm20AttestCpu').toFixed(0)} ms CPU, ${(((m('warm20AttestCpu') - m('warm20Cpu')) * 1000) / 2000).toFixed(0)} µs CPU per signature`,
  );
  console.log(`log written: ${bench.logBytes()} bytes`);
  report({
    path: 'bulk gate check 100 × 5, cold (embedded)',
    figure: m('cold'),
    unit: 'ms',
    peer: 'goal',
    peerFigure: 1000,
    lowerIsBetter: true,
    note: `${(m('cold') / m('rtt')).toFixed(1)} RPC round trips of ${m('rtt').toFixed(1)} ms; ${m('coldCpu').toFixed(0)} ms CPU`,
  });
  await bench.close();
  rpc.child.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
