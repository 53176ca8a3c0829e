import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { connectionSettings } from '../../src/db/index.js';
import { buildTestApp } from '../helpers/app.js';

describe('DATABASE_URL with its own server options, and DATABASE_SCHEMA', () => {
  it('keeps the string as given unless it has options; then sends both, the schema last', () => {
    const plain = 'postgres://u:p%40ss@db.example:5432/app?sslmode=require';
    assert.deepEqual(connectionSettings(plain, 'gatehouse'), {
      connectionString: plain,
      options: '-c search_path=gatehouse',
    });
    assert.deepEqual(connectionSettings(plain, undefined), { connectionString: plain, options: undefined });
    const withOptions =
      'postgres://u:p%40ss@db.example:5432/app?options=-c%20statement_timeout%3D5000&sslmode=require';
    const both = connectionSettings(withOptions, 'gatehouse');
    assert.equal(both.options, '-c statement_timeout=5000 -c search_path=gatehouse');
    const rest = new URL(both.connectionString as string);
    assert.equal(rest.searchParams.get('options'), null);
    assert.equal(rest.searchParams.get('sslmode'), 'require');
    assert.equal(rest.password, 'p%40ss');
    // Without a schema nothing is rewritten: the string's own options reach the server as they are.
    assert.deepEqual(connectionSettings(withOptions, undefined), {
      connectionString: withOptions,
      options: undefined,
    });
  });

  it('on PostgreSQL, the tables go to the schema and the string options still apply', {
    skip: !process.env.DATABASE_URL,
  }, async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.searchParams.set('options', '-c statement_timeout=4321');
    const t = await buildTestApp({ env: { DATABASE_URL: url.toString() } });
    try {
      const schema = t.ctx.config.databaseSchema as string;
      const path = await sql<{ search_path: string }>`show search_path`.execute(t.ctx.db);
      assert.equal(path.rows[0].search_path, schema);
      const timeout = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(t.ctx.db);
      assert.equal(timeout.rows[0].statement_timeout, '4321ms');
      const placed = await sql<{ n: number }>`
        select count(*)::int as n from pg_tables where schemaname = ${schema} and tablename = 'orgs'`.execute(
        t.ctx.db,
      );
      assert.equal(placed.rows[0].n, 1);
    } finally {
      await t.close();
    }
  });
});
