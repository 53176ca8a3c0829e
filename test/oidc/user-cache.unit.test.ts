import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaults } from '../../src/config/defaults.js';
import { BoundedCache } from '../../src/lib/bounded-cache.js';

describe('BoundedCache (the per-instance token and user cache)', () => {
  test('never holds more than its bound: the least recently used entry goes first', () => {
    const c = new BoundedCache<number>(3);
    for (const k of ['a', 'b', 'c']) c.set(k, 1, 1000);
    assert.equal(c.get('a', 0), 1, 'a is now the most recently used');
    c.set('d', 1, 1000);
    assert.equal(c.size, 3);
    assert.equal(c.get('b', 0), undefined, 'b was the least recently used');
    for (const k of ['a', 'c', 'd']) assert.equal(c.get(k, 0), 1);
    for (let i = 0; i < 1000; i++) c.set(`k${i}`, i, 1000);
    assert.equal(c.size, 3);
    assert.equal(c.get('k999', 0), 999);
  });

  test('an entry is gone at its expiry, and overwriting one keeps one entry', () => {
    const c = new BoundedCache<boolean>(10);
    c.set('jti', false, 500);
    assert.equal(c.get('jti', 499), false);
    assert.equal(c.get('jti', 500), undefined);
    assert.equal(c.size, 0, 'an expired entry read is dropped');
    c.set('jti', false, 500);
    c.set('jti', true, 900);
    assert.equal(c.size, 1);
    assert.equal(c.get('jti', 600), true);
  });

  test('drop: one key, or every key for *', () => {
    const c = new BoundedCache<number>(10);
    c.set('a', 1, 1000);
    c.set('b', 2, 1000);
    c.drop('a');
    assert.equal(c.get('a', 0), undefined);
    assert.equal(c.get('b', 0), 2);
    c.drop('*');
    assert.equal(c.size, 0);
  });

  test('the configured bounds are finite and the TTLs short', () => {
    assert.ok(defaults.tokenStateCacheMaxEntries > 0 && defaults.tokenStateCacheMaxEntries <= 1_000_000);
    assert.ok(defaults.userCacheMaxEntries > 0 && defaults.userCacheMaxEntries <= 1_000_000);
    assert.ok(defaults.tokenStateCacheTtlMs <= defaults.accessTokenTtl * 1000);
    assert.ok(defaults.userCacheTtlMs <= 60_000);
  });
});
