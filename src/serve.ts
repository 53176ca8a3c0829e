import cluster from 'node:cluster';
import { chmodSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { superviseWorkers } from './cluster.js';
import { type Config, ConfigError, loadConfig } from './config/index.js';
import type { AppContext } from './context.js';
import { embeddedSocketPath } from './db/index.js';
import { createLogger } from './ops/logging.js';
import { clusterMetrics, startMetricsServer } from './ops/metrics.js';
import { closeContext, createContext } from './wiring.js';

/** A start that cannot go on: one line on stderr (no stack), exit status 1. */
function die(message: string, logger?: Logger): never {
  logger?.flush();
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

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

/** Config and logger, or one line on stderr and exit status 1. */
function configure(): { config: Config; logger?: Logger } {
  const warnings: string[] = [];
  let config: Config;
  try {
    config = loadConfig(process.env, (m) => warnings.push(m));
  } catch (e) {
    if (e instanceof ConfigError) die(e.message);
    throw e;
  }
  const logger = config.logLevel === 'silent' ? undefined : createLogger(config);
  // A cluster's workers read the same environment: the primary has said it once.
  if (!cluster.isWorker) for (const w of warnings) logger ? logger.warn(w) : console.warn(w);
  return { config, logger };
}

/** Opens the stores (migrating unless `migrate` is false), or one line on stderr and exit status 1. */
async function openContext(
  config: Config,
  logger: Logger | undefined,
  migrate: boolean,
): Promise<AppContext> {
  try {
    return await createContext(config, {
      migrate,
      warn: (m) => (logger ? logger.warn(m) : console.warn(m)),
      info: migrate ? (obj, msg) => logger?.info(obj, msg) : undefined,
    });
  } catch (e) {
    if (e instanceof ConfigError) die(e.message, logger);
    logger?.fatal({ err: e }, 'start failed');
    die(`start failed: ${(e as Error).message}`, logger);
  }
}

/** The one "gatehouse ready" line, with the URLs to open next. */
function sayReady(config: Config, logger: Logger | undefined, extra: Record<string, unknown>): void {
  const ready = {
    issuer: config.issuer,
    console: `${config.baseUrl}/console`,
    docs: `${config.baseUrl}/docs`,
    ...extra,
  };
  if (logger) logger.info(ready, 'gatehouse ready');
  else console.log(`gatehouse ready: issuer ${ready.issuer}, console ${ready.console}, docs ${ready.docs}`);
}

function portUnusable(e: unknown, port: number, host: string, name: string, logger?: Logger): void {
  const code = (e as { code?: string }).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
    die(`Invalid configuration: ${name} ${port} on HOST ${host} cannot be used (${code})`, logger);
}

/**
 * Starts a server: config, stores, app, listen; stops cleanly on SIGTERM/SIGINT. Logs one line per
 * migration applied and one "gatehouse ready" line with the URLs to open next. With WORKERS > 1
 * this process becomes the cluster's primary (servePrimary) and each worker comes back here.
 */
export async function serve(opts: { beforeExit?: () => Promise<void> } = {}): Promise<void> {
  const { config, logger } = configure();
  if (config.workers > 1 && cluster.isPrimary) return servePrimary(config, logger, opts);
  const ctx = await openContext(config, logger, !cluster.isWorker);
  const app = await buildApp(ctx, { logger });

  await offerEmbeddedDatabase(ctx, config);

  await app.ready();
  // Fastify logs one "Server listening" line per interface; the ready line below says it once.
  const level = app.log.level;
  app.log.level = 'warn';
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (e) {
    portUnusable(e, config.port, config.host, 'PORT', logger);
    throw e;
  } finally {
    app.log.level = level;
  }
  if (!cluster.isWorker)
    sayReady(config, logger, {
      database: ctx.database.kind,
      redis: config.redisUrl ? 'on' : 'off',
      ...(ctx.metrics.port !== undefined ? { metrics: `:${ctx.metrics.port}/metrics` } : {}),
    });

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

/**
 * WORKERS > 1: everything a start does once (migrations, the first signing key, the console brand)
 * happens here before any fork; then the workers serve (src/cluster.ts) and this process serves
 * only the summed metrics of all of them (METRICS_PORT).
 */
async function servePrimary(
  config: Config,
  logger: Logger | undefined,
  opts: { beforeExit?: () => Promise<void> },
): Promise<void> {
  const ctx = await openContext(config, logger, true);
  const database = ctx.database.kind;
  await closeContext(ctx);
  // A port that cannot be used fails here with one line, not once per worker.
  await new Promise<void>((resolve) => {
    const probe = createServer();
    probe.once('error', (e) => {
      portUnusable(e, config.port, config.host, 'PORT', logger);
      die(`start failed: ${e.message}`, logger);
    });
    probe.listen(config.port, config.host, () => probe.close(() => resolve()));
  });
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  if (config.metricsPort !== undefined) {
    const log = { warn: (obj: unknown, msg?: string) => logger?.warn(obj, msg) };
    try {
      metrics = await startMetricsServer(clusterMetrics(), config.metricsPort, config.host, log);
    } catch (e) {
      portUnusable(e, config.metricsPort, config.host, 'METRICS_PORT', logger);
      throw e;
    }
  }
  const quiet = { info: () => {}, warn: () => {} };
  superviseWorkers({
    workers: config.workers,
    log: logger ?? quiet,
    onReady: () =>
      sayReady(config, logger, {
        database,
        redis: 'on',
        workers: config.workers,
        ...(metrics ? { metrics: `:${metrics.port}/metrics` } : {}),
      }),
    onFailedStart: () => {
      logger?.flush();
      process.exit(1);
    },
    onStopped: async (_signal, clean) => {
      await metrics?.close();
      await opts.beforeExit?.().catch(() => {});
      logger?.flush();
      process.exit(clean ? 0 : 1);
    },
  });
}
