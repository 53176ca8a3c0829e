/**
 * The token-gate benchmarks' Gatehouse: built in this process as `npm start` would run it in
 * production (NODE_ENV=production, so LOG_LEVEL info, and LOG_REQUESTS all unless set), its log
 * written through pino's asynchronous destination to a file instead of stdout (what a user's
 * redirected stdout is), with one org owned by a bench user.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import type { AppContext } from '../src/context.js';
import { newId } from '../src/lib/ids.js';
import { createLogger } from '../src/ops/logging.js';
import { createContext } from '../src/wiring.js';
import { insertOrg } from '../test/helpers/fixtures.js';

export interface GatesBench {
  ctx: AppContext;
  app: FastifyInstance;
  org: { id: string; slug: string };
  userId: string;
  /** Where the app's log goes; its size tells what the logging wrote. */
  logFile: string;
  logBytes(): number;
  close(): Promise<void>;
}

export async function startGatesBench(rpcUrl: string): Promise<GatesBench> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    BASE_URL: 'http://127.0.0.1',
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    SOLANA_RPC_URL: rpcUrl,
    RATE_LIMIT_MULTIPLIER: '1000000',
  };
  for (const name of ['LOG_LEVEL', 'LOG_REQUESTS', 'REDIS_URL'] as const)
    if (process.env[name]) env[name] = process.env[name] as string;
  const config = loadConfig(env, () => {});
  const ctx = await createContext(config, { memory: true, warn: () => {} });
  const logFile = join(dataDir, 'gatehouse.log');
  const logger =
    config.logLevel === 'silent'
      ? undefined
      : createLogger(config, pino.destination({ dest: logFile, sync: false, mkdir: true }));
  const app = await buildApp(ctx, logger ? { logger } : {});

  const now = ctx.clock.now();
  const userId = newId('usr_');
  const org = { id: newId('org_'), slug: 'bench-org' };
  await ctx.db
    .insertInto('users')
    .values({ id: userId, username: 'bench', last_seen: now, created_at: now, updated_at: now } as never)
    .execute();
  await insertOrg(ctx.db, { ...org, createdBy: userId, now });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    ctx,
    app,
    org,
    userId,
    logFile,
    logBytes: () => {
      try {
        return statSync(logFile).size;
      } catch {
        return 0;
      }
    },
    async close() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
