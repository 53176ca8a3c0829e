import { register } from 'node:module';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TracingOptions {
  /** Where spans go instead of OTLP (tests: an in-memory exporter behind a simple processor). */
  spanProcessors?: SpanProcessor[];
}

let sdk: NodeSDK | undefined;

/**
 * OpenTelemetry traces: HTTP (server and outgoing calls), PostgreSQL queries and Redis commands,
 * exported over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (`OTEL_SERVICE_NAME` defaults to
 * `gatehouse`; the other OTEL_* variables apply as the SDK documents them).
 *
 * Loaded only when that variable is set (src/main.ts imports this module dynamically before the
 * server), because the instrumentations must patch `http`, `pg` and `ioredis` before they load. The
 * ESM loader hook lets them see modules that ES `import` loads.
 */
export async function startTracing(opts: TracingOptions = {}): Promise<void> {
  if (sdk) return;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  process.env.OTEL_SERVICE_NAME ||= 'gatehouse';
  sdk = new NodeSDK({
    ...(opts.spanProcessors
      ? { spanProcessors: opts.spanProcessors }
      : { traceExporter: new OTLPTraceExporter() }),
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes would drown the traces.
        ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/readyz',
      }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new IORedisInstrumentation({ dbStatementSerializer: (cmd) => cmd }),
    ],
  });
  sdk.start();
  const shutdown = () => {
    sdk?.shutdown().catch(() => {});
  };
  process.once('beforeExit', shutdown);
}

/** Flushes and stops tracing (tests; the process exit does it otherwise). */
export async function stopTracing(): Promise<void> {
  const s = sdk;
  sdk = undefined;
  await s?.shutdown();
}
