import { chmodSync, rmSync } from 'node:fs';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config/index.js';
import type { AppContext } from './context.js';
import { embeddedSocketPath } from './db/index.js';
import { createLogger } from './ops/logging.js';
import { createContext } from './wiring.js';

/** A start that cannot go on: one line on stderr (no stack), exit status 1. */
function die(message: string, logger?: Logger): never {
  logger?.flush();
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * Starts a server: config, stores, app, listen; stops cleanly on SIGTERM/SIGINT. Logs one line per
 * migration applied and one "gatehouse ready" line with the URLs to open next.
 */
/**
 * The embedded database can be opened by one process only: offer it to the CLI on a Unix socket
 * inside DATA_DIR, readable by this user only (closed with the context).
 */
async function offerEmbeddedDatabase(ctx: AppContext, config: Config): Promise<void> {
  if (!ctx.database.pglite) return;
  const path = embeddedSocketPath(config.dataDir);
  rmSync(path, { force: true });
  const socketServer = new PGLiteSocketServer({ db: ctx.database.pglite, path, maxConnections: 4 });
  await socketServer.start();
  chmodSync(path, 0o600);
  ctx.hooks.onClose.push(async () => {
    await socketServer.stop();
    rmSync(path, { force: true });
  });
}

export async function serve(opts: { beforeExit?: () => Promise<void> } = {}): Promise<void> {
  const warnings: string[] = [];
  let config: Config;
  try {
    config = loadConfig(process.env, (m) => warnings.push(m));
  } catch (e) {
    if (e instanceof ConfigError) die(e.message);
    throw e;
  }
  const logger = config.logLevel === 'silent' ? undefined : createLogger(config);
  for (const w of warnings) logger ? logger.warn(w) : console.warn(w);

  let ctx: Awaited<ReturnType<typeof createContext>>;
  try {
    ctx = await createContext(config, {
      warn: (m) => (logger ? logger.warn(m) : console.warn(m)),
      info: (obj, msg) => logger?.info(obj, msg),
    });
  } catch (e) {
    if (e instanceof ConfigError) die(e.message, logger);
    logger?.fatal({ err: e }, 'start failed');
    die(`start failed: ${(e as Error).message}`, logger);
  }
  const app = await buildApp(ctx, { logger });

  await offerEmbeddedDatabase(ctx, config);

  await app.ready();
  // Fastify logs one "Server listening" line per interface; the ready line below says it once.
  const level = app.log.level;
  app.log.level = 'warn';
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      die(
        `Invalid configuration: PORT ${config.port} on HOST ${config.host} cannot be used (${code})`,
        logger,
      );
    throw e;
  } finally {
    app.log.level = level;
  }
  const ready = {
    issuer: config.issuer,
    console: `${config.baseUrl}/console`,
    docs: `${config.baseUrl}/docs`,
    database: ctx.database.kind,
    redis: config.redisUrl ? 'on' : 'off',
    ...(ctx.metrics.port !== undefined ? { metrics: `:${ctx.metrics.port}/metrics` } : {}),
  };
  if (logger) logger.info(ready, 'gatehouse ready');
  else console.log(`gatehouse ready: issuer ${ready.issuer}, console ${ready.console}, docs ${ready.docs}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 15_000);
    timer.unref();
    try {
      await app.close();
      await opts.beforeExit?.().catch(() => {});
      logger?.flush();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
