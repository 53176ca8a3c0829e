/**
 * Webhook fan-out: 10,000 events recorded through the mutation path (audit entry + outbox rows in the
 * event's transaction) are delivered by the running worker to a loopback HTTPS receiver in a child
 * process. Prints deliveries per second and event-to-first-attempt latency (event time → the receiver
 * has read the request) p50/p99, for a burst (every event at once: throughput) and for a paced stream
 * below capacity (latency as a subscriber sees it).
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/webhooks.ts
 * BENCH_EVENTS (default 10000), BENCH_WEBHOOKS subscribed webhooks (default 1), BENCH_PACED_EVENTS
 * (default 2000) at BENCH_PACED_RATE events/s (default 500). Without DATABASE_URL it runs on the
 * embedded database. Works in a fresh schema and drops it at the end. Goal: ≥ 1,000 deliveries/s,
 * p50 < 50 ms.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { recordMutation } from '../src/events/outbox.js';
import { newId, randomAlphanumeric } from '../src/lib/ids.js';
import { webhookWorker } from '../src/modules/webhooks/webhooks.routes.js';
import { createWebhook } from '../src/modules/webhooks/webhooks.service.js';
import { closeContext, createContext } from '../src/wiring.js';
import { pct } from './lib.js';
import { report } from './report.js';
import { insertOrg } from '../test/helpers/fixtures.js';

interface Summary {
  count: number;
  firstAt: number;
  lastAt: number;
  latencies: number[];
  duplicates: number;
}

// ---------------------------------------------------------------- receiver (child process)

if (process.argv[2] === '--receiver') {
  const key = readFileSync(process.argv[3], 'utf8');
  const cert = readFileSync(process.argv[4], 'utf8');
  let s: Summary = { count: 0, firstAt: 0, lastAt: 0, latencies: [], duplicates: 0 };
  let seen = new Set<string>();
  const server = createServer({ key, cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; timestamp: string };
      if (seen.has(body.id)) s.duplicates++;
      seen.add(body.id);
      if (s.count === 0) s.firstAt = at;
      s.lastAt = at;
      s.count++;
      s.latencies.push(at - Date.parse(body.timestamp));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'summary') process.send?.({ summary: s });
    if (m.cmd === 'reset') {
      s = { count: 0, firstAt: 0, lastAt: 0, latencies: [], duplicates: 0 };
      seen = new Set();
      process.send?.({ reset: true });
    }
    if (m.cmd === 'exit') process.exit(0);
  });
} else {
  await main();
}

// ---------------------------------------------------------------- driver

function request<T>(child: ChildProcess, cmd: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (key in m) {
        child.off('message', on);
        resolve(m[key] as T);
      }
    };
    child.on('message', on);
    child.send({ cmd });
  });
}

async function main(): Promise<void> {
  const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
  const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 1);
  const PACED = Number(process.env.BENCH_PACED_EVENTS ?? 2000);
  const RATE = Number(process.env.BENCH_PACED_RATE ?? 500);

  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-webhooks-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const child = fork(
    fileURLToPath(import.meta.url),
    ['--receiver', join(dir, 'key.pem'), join(dir, 'cert.pem')],
    {
      execArgv: ['--import', 'tsx'],
    },
  );
  const { port } = await new Promise<{ port: number }>((resolve) =>
    child.once('message', (m) => resolve(m as { port: number })),
  );

  const schema = `bench_webhooks_${randomAlphanumeric(8).toLowerCase()}`;
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      BASE_URL: 'http://gatehouse.bench',
      ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      DATA_DIR: '/nonexistent-gatehouse-bench',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_MULTIPLIER: '1000000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      REDIS_PREFIX: `${schema}:`,
      ...(process.env.DATABASE_URL
        ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema }
        : {}),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    },
    () => {},
  );
  const ctx = await createContext(config, { memory: true });
  const app = await buildApp(ctx, { ownsContext: false });
  const worker = webhookWorker(ctx);
  worker.configureClient({ ca: readFileSync(join(dir, 'cert.pem'), 'utf8') });
  await app.ready(); // starts the worker
  const engine = config.databaseUrl ? 'PostgreSQL' : 'PGlite (embedded)';

  try {
    const now = ctx.clock.now();
    const userId = newId('usr_');
    await ctx.db
      .insertInto('users')
      .values({ id: userId, username: null, last_seen: now, created_at: now, updated_at: now } as never)
      .execute();
    const orgId = newId('org_');
    const slug = `bench-${randomAlphanumeric(6).toLowerCase()}`;
    await insertOrg(ctx.db, { id: orgId, slug, createdBy: userId, now });
    const org = await ctx.db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirstOrThrow();
    for (let i = 0; i < WEBHOOKS; i++)
      await createWebhook(ctx, org, userId, { url: `https://127.0.0.1:${port}/hook/${i}`, events: ['*'] });

    const fire = (count: number) =>
      ctx.db.transaction().execute(async (trx) => {
        for (let i = 0; i < count; i++) {
          await recordMutation(trx, ctx.clock, {
            orgId,
            actorUserId: userId,
            action: 'member.added',
            resourceType: 'member',
            resourceId: userId,
            events: [{ type: 'member.added', data: { user: userId, roles: ['Member'] } }],
          });
        }
      });

    const waitFor = async (expected: number, timeoutMs: number): Promise<Summary> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await request<Summary>(child, 'summary', 'summary');
        if (s.count >= expected || Date.now() > deadline) return s;
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    const print = (label: string, s: Summary, expected: number, startedAt: number, latency: boolean) => {
      const lat = [...s.latencies].sort((a, b) => a - b);
      const seconds = (s.lastAt - startedAt) / 1000;
      console.log(label);
      console.log(`  deliveries received     ${s.count} of ${expected} (duplicates: ${s.duplicates})`);
      console.log(`  deliveries per second   ${(s.count / seconds).toFixed(0)}`);
      if (latency)
        console.log(
          `  event → first attempt   p50 ${pct(lat, 50)} ms   p99 ${pct(lat, 99)} ms   max ${lat[lat.length - 1]} ms`,
        );
    };

    console.log(
      `webhooks bench on ${engine}: ${EVENTS} events × ${WEBHOOKS} webhook(s), receiver https://127.0.0.1:${port}`,
    );

    // Warm-up: connections, TLS sessions, prepared plans.
    await fire(50);
    await waitFor(50 * WEBHOOKS, 30_000);
    await request(child, 'reset', 'reset');

    // Throughput: the events are queued with the worker stopped, then the worker drains them.
    await worker.stop();
    const queueStart = Date.now();
    for (let sent = 0; sent < EVENTS; sent += 100) await fire(Math.min(100, EVENTS - sent));
    const queuedIn = Date.now() - queueStart;
    const drainStart = Date.now();
    const cpuBefore = process.cpuUsage();
    await worker.start();
    const burst = await waitFor(EVENTS * WEBHOOKS, 300_000);
    const cpu = process.cpuUsage(cpuBefore);
    print(
      `drain (${EVENTS * WEBHOOKS} deliveries queued in ${queuedIn} ms, then the worker started)`,
      burst,
      EVENTS * WEBHOOKS,
      drainStart,
      false,
    );
    const cpuUs = (cpu.user + cpu.system) / burst.count;
    console.log(`  worker process CPU      ${(cpuUs / 1000).toFixed(2)} ms per delivery (user+system)`);
    report({
      path: `webhook drain (${engine})`,
      figure: burst.count / ((burst.lastAt - drainStart) / 1000),
      unit: 'deliveries/s',
      peer: 'goal',
      peerFigure: 1000,
      cpuUs,
    });

    // Latency: events at a steady rate below capacity, one per transaction, the worker running.
    await request(child, 'reset', 'reset');
    const pacedStart = Date.now();
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < PACED; i++) {
      const due = pacedStart + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const p: Promise<unknown> = fire(1).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= 8) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    const paced = await waitFor(PACED * WEBHOOKS, 120_000);
    print(
      `paced (${RATE} events/s target, one event per transaction)`,
      paced,
      PACED * WEBHOOKS,
      pacedStart,
      true,
    );
  } finally {
    await app.close();
    if (config.databaseUrl) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(ctx.db);
    await closeContext(ctx);
    child.send({ cmd: 'exit' });
    rmSync(dir, { recursive: true, force: true });
  }
}
