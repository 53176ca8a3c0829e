import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { restartDelay } from '../../src/cluster.js';
import { ConfigError, loadConfig, MAX_WORKERS } from '../../src/config/index.js';

const KEY = Buffer.alloc(32, 1).toString('base64');
const base = { ENCRYPTION_KEY: KEY, DATA_DIR: '/nonexistent-gatehouse-workers-test' };
const shared = { ...base, DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h:6379' };

function refused(env: Record<string, string>, line: RegExp): void {
  assert.throws(
    () => loadConfig(env, () => {}),
    (e: unknown) => e instanceof ConfigError && line.test(e.message) && !e.message.includes('\n'),
  );
}

describe('WORKERS', () => {
  it('defaults to the number of cores with PostgreSQL and Redis, outside NODE_ENV=test', () => {
    const cores = Math.min(availableParallelism(), MAX_WORKERS);
    assert.equal(loadConfig(shared).workers, cores);
    assert.equal(loadConfig({ ...shared, NODE_ENV: 'production' }).workers, cores);
    assert.equal(loadConfig({ ...shared, NODE_ENV: 'test' }).workers, 1);
  });

  it('defaults to 1 on the embedded database or without Redis', () => {
    assert.equal(loadConfig(base).workers, 1);
    assert.equal(loadConfig({ ...base, REDIS_URL: 'redis://h:6379' }).workers, 1);
    assert.equal(loadConfig({ ...base, DATABASE_URL: 'postgres://h/db' }).workers, 1);
  });

  it('takes a whole number from 1 to MAX_WORKERS, more than the cores included', () => {
    assert.equal(loadConfig({ ...shared, WORKERS: '1' }).workers, 1);
    assert.equal(loadConfig({ ...shared, WORKERS: '2' }).workers, 2);
    assert.equal(loadConfig({ ...shared, WORKERS: String(MAX_WORKERS) }).workers, MAX_WORKERS);
    assert.equal(loadConfig({ ...base, WORKERS: '1' }).workers, 1);
  });

  it('refuses 0, a non-number and too many, in one line naming WORKERS', () => {
    refused({ ...shared, WORKERS: '0' }, /^Invalid configuration: WORKERS must be between 1 and 64, got 0$/);
    refused(
      { ...shared, WORKERS: 'two' },
      /^Invalid configuration: WORKERS must be a whole number, got "two"$/,
    );
    refused({ ...shared, WORKERS: '1.5' }, /^Invalid configuration: WORKERS must be a whole number/);
    refused({ ...shared, WORKERS: '-2' }, /^Invalid configuration: WORKERS must be a whole number/);
    refused(
      { ...shared, WORKERS: String(MAX_WORKERS + 1) },
      /^Invalid configuration: WORKERS must be between/,
    );
  });

  it('refuses several workers on the embedded database, saying why', () => {
    refused(
      { ...base, WORKERS: '2' },
      /^Invalid configuration: WORKERS must be 1 with the embedded database .*DATABASE_URL/,
    );
    refused(
      { ...base, REDIS_URL: 'redis://h:6379', WORKERS: '2' },
      /^Invalid configuration: WORKERS must be 1 with the embedded database/,
    );
  });

  it('refuses several workers without Redis: the per-process limiter would multiply every limit', () => {
    refused(
      { ...base, DATABASE_URL: 'postgres://h/db', WORKERS: '3' },
      /^Invalid configuration: WORKERS must be 1 without REDIS_URL .*multiplying every limit by 3; set REDIS_URL/,
    );
  });
});

describe('replacing a worker that died', () => {
  it('backs off exponentially from 100 ms to at most 10 s while workers keep dying young', () => {
    assert.deepEqual([0, 1, 2, 3, 4].map(restartDelay), [100, 100, 200, 400, 800]);
    assert.equal(restartDelay(7), 6400);
    assert.equal(restartDelay(8), 10_000);
    assert.equal(restartDelay(20), 10_000);
  });
});
