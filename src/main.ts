/**
 * The server's entry point (`npm start`, `node --import tsx src/main.ts`, the container). Tracing
 * must patch `http`, `pg` and `ioredis` before anything loads them, so this file imports nothing
 * else statically: OpenTelemetry first (only when OTEL_EXPORTER_OTLP_ENDPOINT is set), then the
 * server.
 */
export async function main(): Promise<void> {
  let beforeExit: (() => Promise<void>) | undefined;
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { startTracing, stopTracing } = await import('./ops/tracing.js');
    await startTracing();
    beforeExit = stopTracing; // sends the spans still batched
  }
  const { serve } = await import('./serve.js');
  await serve({ beforeExit });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
