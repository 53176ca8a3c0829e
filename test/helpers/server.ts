import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/index.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { freePort, waitForHttp } from './net.js';

export const GATEHOUSE_BIN = new URL('../../bin/gatehouse.mjs', import.meta.url).pathname;

export interface RunningServer {
  /** http://localhost:<port>: BASE_URL, the issuer. */
  url: string;
  port: number;
  dataDir: string;
  /** The environment the server runs with; `gatehouse` CLI calls and examples reuse it. */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/**
 * A real `gatehouse` process listening on a free port of 127.0.0.1, with its own DATA_DIR (PGlite),
 * or with DATABASE_URL a schema of its own that `stop` drops. For tests of clients that talk HTTP
 * to a server as a user would: the CLI's dev helper, the getting-started guide, the examples.
 */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-srv-'));
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const schema = process.env.DATABASE_URL ? `gh_srv_${randomAlphanumeric(8).toLowerCase()}` : undefined;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ENCRYPTION_KEY: Buffer.alloc(32, 11).toString('base64'),
    ...(schema ? { DATABASE_SCHEMA: schema } : {}),
    ...extraEnv,
  };
  delete env.REDIS_URL;
  const child: ChildProcess = spawn(process.execPath, [GATEHOUSE_BIN], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await Promise.race([
      waitForHttp(`http://127.0.0.1:${port}/readyz`),
      exited.then(() => {
        throw new Error(`gatehouse exited before it was ready: ${stderr}`);
      }),
    ]);
  } catch (e) {
    child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    port,
    dataDir,
    env,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      if (schema) {
        const h = await openDatabase(loadConfig({ ...env } as never, () => {}));
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(h.db);
        await h.close();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
