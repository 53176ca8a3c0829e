import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/index.js';
import { listMigrations } from '../../src/db/migrate.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { closeContext, createContext } from '../../src/wiring.js';

const KEY = Buffer.alloc(32, 3).toString('base64');

describe('startup', () => {
  it('several instances starting together on an empty database migrate once and bootstrap once', async (tc) => {
    if (!process.env.DATABASE_URL) return tc.skip('needs DATABASE_URL (PGlite is one process)');
    const schema = `gh_start_${randomAlphanumeric(8).toLowerCase()}`;
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: process.env.DATABASE_URL,
      DATABASE_SCHEMA: schema,
      ENCRYPTION_KEY: KEY,
      DATA_DIR: '/nonexistent-gatehouse-startup',
    };
    const config = loadConfig(env, () => {});
    try {
      const ctxs = await Promise.all([0, 1, 2].map(() => createContext(config, { warn: () => {} })));
      const db = ctxs[0].db;
      const migrations = await sql<{ n: number }>`select count(*)::int as n from schema_migrations`.execute(
        db,
      );
      assert.equal(migrations.rows[0].n, listMigrations().length);
      const keys = await db.selectFrom('signing_keys').select('kid').execute();
      assert.equal(keys.length, 1);
      const consoleApps = await db
        .selectFrom('apps')
        .select('id')
        .where('client_id', '=', 'console')
        .execute();
      assert.equal(consoleApps.length, 1);
      const roles = await db.selectFrom('roles').select('id').where('org_id', '=', 'org_system').execute();
      assert.equal(roles.length, 3);
      const jwks = await Promise.all(ctxs.map((c) => c.keys.jwks()));
      assert.equal(new Set(jwks).size, 1);
      for (const c of ctxs) await closeContext(c);
    } finally {
      const h = await openDatabase(config);
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(h.db);
      await h.close();
    }
  });

  it('logs request ids and redacts credentials and query strings', async () => {
    const lines: string[] = [];
    const env: Record<string, string> = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      ENCRYPTION_KEY: KEY,
      DATA_DIR: '/nonexistent-gatehouse-startup',
      BASE_URL: 'http://gatehouse.test',
    };
    if (process.env.DATABASE_URL) {
      env.DATABASE_URL = process.env.DATABASE_URL;
      env.DATABASE_SCHEMA = `gh_log_${randomAlphanumeric(8).toLowerCase()}`;
    }
    const ctx = await createContext(
      loadConfig(env, () => {}),
      { memory: true, warn: () => {} },
    );
    const app = await buildApp(ctx, { logStream: { write: (l: string) => void lines.push(l) } });
    try {
      await app.inject({
        url: '/.well-known/openid-configuration?code=supersecretcode',
        headers: { authorization: 'Bearer supersecrettoken', cookie: 'gh_session=supersecretcookie' },
      });
      const text = lines.join('');
      assert.ok(text.length > 0);
      assert.ok(!text.includes('supersecret'), text);
      const entry = JSON.parse(lines[0]);
      assert.ok(entry.reqId, 'each line carries the request id');
      assert.equal(entry.route, '/.well-known/openid-configuration');
    } finally {
      if (env.DATABASE_SCHEMA)
        await sql`drop schema if exists ${sql.id(env.DATABASE_SCHEMA)} cascade`.execute(ctx.db);
      await app.close();
    }
  });
});
