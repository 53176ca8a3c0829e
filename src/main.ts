/**
 * The server's entry point (`npm start`, `node --import tsx src/main.ts`, the container). Tracing
 * must patch `http`, `pg` and `ioredis` before anything loads them, so this file imports nothing
 * else statically: OpenTelemetry first (only when OTEL_EXPORTER_OTLP_ENDPOINT is set), then the
 * server.
 */
export async function main(): Promise<void> {
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { startTracing } = await import('./ops/tracing.js');
    await startTracing();
  }
  const { serve } = await import('./serve.js');
  await serve();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
