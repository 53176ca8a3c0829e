import { chmodSync, rmSync } from 'node:fs';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';
import { embeddedSocketPath } from './db/index.js';
import { createContext } from './server.js';

/** Starts a server: config, stores, app, listen; stops cleanly on SIGTERM/SIGINT. */
export async function serve(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  const ctx = await createContext(config);
  const app = await buildApp(ctx);

  let socketServer: PGLiteSocketServer | undefined;
  if (ctx.database.pglite) {
    // The embedded database can be opened by one process only: offer it to the CLI on a Unix
    // socket inside DATA_DIR, readable by this user only.
    const path = embeddedSocketPath(config.dataDir);
    rmSync(path, { force: true });
    socketServer = new PGLiteSocketServer({ db: ctx.database.pglite, path, maxConnections: 4 });
    await socketServer.start();
    chmodSync(path, 0o600);
    ctx.hooks.onClose.push(async () => {
      await socketServer?.stop();
      rmSync(path, { force: true });
    });
  }

  await app.listen({ port: config.port, host: config.host });
  app.log.info({ issuer: config.issuer, database: ctx.database.kind }, 'gatehouse listening');
  if (config.logLevel === 'silent') console.log(`gatehouse listening on ${config.baseUrl}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 15_000);
    timer.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await serve();
}
