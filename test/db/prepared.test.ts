import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config/index.js';
import { connectionSettings, openDatabase } from '../../src/db/index.js';
import { prepareStatements } from '../../src/db/prepared.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';

const url = process.env.DATABASE_URL;

describe('named prepared statements (DATABASE_PREPARED_STATEMENTS)', {
  skip: !url && 'needs DATABASE_URL',
}, () => {
  const schema = `prep_${randomAlphanumeric(10).toLowerCase()}`;
  const connect = async (limit?: number) => {
    const client = new pg.Client(connectionSettings(url, schema));
    await client.connect();
    if (limit !== undefined) prepareStatements(client, limit);
    return client;
  };
  let admin: pg.Client;
  const opened: pg.Client[] = [];
  const prepared = async (limit: number) => {
    const c = await connect(limit);
    opened.push(c);
    return c;
  };
  /** The statements this connection has prepared by name, as the server lists them. */
  const namedOn = async (c: pg.Client) =>
    (
      await c.query<{ name: string; statement: string }>(
        'select name, statement from pg_prepared_statements order by name',
      )
    ).rows;

  before(async () => {
    admin = await connect();
    await admin.query(`create schema ${schema}`);
    await admin.query('create table items (id int primary key, label text)');
    await admin.query("insert into items values (1, 'one'), (2, 'two')");
  });
  after(async () => {
    for (const c of opened) await c.end().catch(() => {});
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });

  it('prepares a statement with parameters once per connection; one without stays unnamed', async () => {
    const c = await prepared(10);
    for (const id of [1, 2, 1]) {
      const r = await c.query('select label from items where id = $1', [id]);
      assert.equal(r.rows[0].label, id === 1 ? 'one' : 'two');
    }
    await c.query('select count(*) from items', []);
    await c.query('select 1');
    assert.deepEqual(await namedOn(c), [{ name: 'g1', statement: 'select label from items where id = $1' }]);
    // A callback-style or config-object query is left as node-postgres has it.
    const viaConfig = await c.query({ text: 'select label from items where id = $1', values: [2] });
    assert.equal(viaConfig.rows[0].label, 'two');
    assert.equal((await namedOn(c)).length, 1);
  });

  it('names at most the limit; later texts run unnamed and answer the same', async () => {
    const c = await prepared(2);
    const texts = [
      'select label from items where id = $1',
      'select id from items where label = $1',
      'select id, label from items where id >= $1 order by id',
    ];
    for (const text of texts) await c.query(text, [1]);
    const third = await c.query(texts[2], [1]);
    assert.deepEqual(third.rows, [
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ]);
    assert.deepEqual(
      (await namedOn(c)).map((s) => s.statement),
      texts.slice(0, 2),
    );
  });

  it('a column added under a prepared select * (a rolling deploy): retried at once outside a transaction', async () => {
    await admin.query('create table wide (id int primary key, a text)');
    await admin.query("insert into wide values (1, 'x')");
    const c = await prepared(10);
    assert.deepEqual((await c.query('select * from wide where id = $1', [1])).rows, [{ id: 1, a: 'x' }]);
    await admin.query("alter table wide add column b text default 'new'");
    // PostgreSQL refuses the cached plan; the statement is prepared afresh and answers with the column.
    assert.deepEqual((await c.query('select * from wide where id = $1', [1])).rows, [
      { id: 1, a: 'x', b: 'new' },
    ]);
    assert.deepEqual(
      (await namedOn(c)).map((s) => s.name),
      ['g1', 'g2'],
    );
  });

  it('inside a transaction the refusal stands once (the transaction is aborted); the next use prepares afresh', async () => {
    await admin.query('create table wider (id int primary key, a text)');
    await admin.query("insert into wider values (1, 'x')");
    const c = await prepared(10);
    await c.query('select * from wider where id = $1', [1]);
    await admin.query('alter table wider add column b int');
    await c.query('begin');
    // The request meeting it answers 503 with Retry-After; the next use prepares afresh.
    await assert.rejects(c.query('select * from wider where id = $1', [1]), (e: { code?: string }) => {
      assert.equal(e.code, '0A000');
      assert.equal(isDatabaseUnavailable(e), true);
      return true;
    });
    await c.query('rollback');
    assert.deepEqual((await c.query('select * from wider where id = $1', [1])).rows, [
      { id: 1, a: 'x', b: null },
    ]);
    // A savepoint's rollback keeps the transaction: the refusal still stands inside it.
    await admin.query('alter table wider add column c int');
    await c.query('begin');
    await c.query('savepoint s1');
    await c.query('rollback to savepoint s1');
    await assert.rejects(
      c.query('select * from wider where id = $1', [1]),
      (e: { code?: string }) => e.code === '0A000',
    );
    await c.query('rollback');
    assert.equal((await c.query('select * from wider where id = $1', [1])).rows[0].c, null);
  });

  it('the setting: on by default for DATABASE_URL, off sends text; anything else is refused', async () => {
    const config = (value?: string) =>
      loadConfig(
        {
          NODE_ENV: 'test',
          DATABASE_URL: url,
          DATABASE_SCHEMA: schema,
          ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
          DATA_DIR: '/nonexistent-gatehouse-prepared',
          ...(value === undefined ? {} : { DATABASE_PREPARED_STATEMENTS: value }),
        },
        () => {},
      );
    for (const [value, named] of [
      [undefined, true],
      ['off', false],
      ['on', true],
    ] as const) {
      const h = await openDatabase(config(value));
      try {
        // One transaction: the same connection runs the statement and lists what it prepared.
        const listed = await h.db.transaction().execute(async (trx) => {
          for (let i = 0; i < 2; i++) await sql`select label from items where id = ${1}`.execute(trx);
          return (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(trx))
            .rows;
        });
        assert.equal(
          listed.some((r) => r.statement === 'select label from items where id = $1'),
          named,
          `${value}: ${JSON.stringify(listed)}`,
        );
      } finally {
        await h.close();
      }
    }
    assert.throws(() => config('sometimes'), /DATABASE_PREPARED_STATEMENTS/);
  });

  it('any other error passes through and the statement stays usable', async () => {
    const c = await prepared(10);
    await assert.rejects(
      c.query('insert into items values ($1, $2)', [1, 'dup']),
      (e: { code?: string }) => e.code === '23505',
    );
    await c.query('insert into items values ($1, $2)', [3, 'three']);
    assert.equal((await c.query('select label from items where id = $1', [3])).rows[0].label, 'three');
    // A statement the server cannot parse is never kept as prepared: each try reports the error.
    for (let i = 0; i < 2; i++)
      await assert.rejects(
        c.query('select nope from items where id = $1', [1]),
        (e: { code?: string }) => e.code === '42703',
      );
  });
});
