import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing, stopTracing } from '../../src/ops/tracing.js';

// Tracing patches http, pg and ioredis as they load: start it before anything imports them, as
// src/main.ts does, then load the app.
const exporter = new InMemorySpanExporter();
await startTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const { buildTestApp } = await import('../helpers/app.js');

describe('OpenTelemetry traces', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let base: string;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await t.close();
    await stopTracing();
  });

  it('records a server span per HTTP request, with database and Redis spans when they are used', async () => {
    exporter.reset();
    const res = await fetch(`${base}/.well-known/openid-configuration`);
    assert.equal(res.status, 200);
    await fetch(`${base}/healthz`);
    // A route that reads the database: an unknown token gate's check.
    await fetch(
      `${base}/identity/organizations/acme/token-gates/gate_${'x'.repeat(10)}/check?walletAddress=11111111111111111111111111111111`,
    );
    const spans = exporter.getFinishedSpans();
    const server = spans.filter((s) => s.kind === 1); // SpanKind.SERVER
    const paths = server.map((s) => String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? ''));
    assert.ok(
      paths.some((p) => p === '/.well-known/openid-configuration'),
      JSON.stringify(paths),
    );
    assert.ok(!paths.some((p) => p.startsWith('/healthz')), 'probes are not traced');
    const dbSpans = spans.filter(
      (s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql',
    );
    if (process.env.DATABASE_URL) {
      assert.ok(dbSpans.length > 0, `pg spans: ${spans.map((s) => s.name).join(', ')}`);
      const traceIds = new Set(server.map((s) => s.spanContext().traceId));
      assert.ok(
        dbSpans.some((s) => traceIds.has(s.spanContext().traceId)),
        'a query belongs to a request trace',
      );
    }
    if (process.env.REDIS_URL) {
      const redisSpans = spans.filter(
        (s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis',
      );
      assert.ok(redisSpans.length > 0, `redis spans: ${spans.map((s) => s.name).join(', ')}`);
    }
  });

  it('is loaded only through the fixed dynamic import in src/main.ts', () => {
    const src = new URL('../../src', import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) =>
        statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)],
      );
    for (const f of files(src)) {
      const text = readFileSync(f, 'utf8');
      if (f.endsWith('/ops/tracing.ts')) continue;
      assert.ok(!text.includes("from '@opentelemetry"), `${f} imports OpenTelemetry`);
      if (/import\(['"]\.\/ops\/tracing\.js['"]\)/.test(text)) assert.ok(f.endsWith('/src/main.ts'), f);
    }
    const main = readFileSync(join(src, 'main.ts'), 'utf8');
    assert.match(
      main,
      /if \(process\.env\.OTEL_EXPORTER_OTLP_ENDPOINT\) \{\s+const \{ startTracing, stopTracing \} = await import\('\.\/ops\/tracing\.js'\)/,
    );
  });
});
