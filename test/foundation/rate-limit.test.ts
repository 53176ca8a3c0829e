import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';

describe('rate limits', () => {
  let t: TestApp;
  before(async () => {
    // 600/min/IP on /.well-known scaled by 0.005 → 3 per minute.
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '0.005' } });
  });
  after(() => t.close());

  it('sends RateLimit headers and answers 429 with Retry-After once the budget is spent', async () => {
    const ip = '198.51.100.7';
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ url: '/.well-known/openid-configuration', remoteAddress: ip });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], '3');
      seen.push(Number(res.headers['ratelimit-remaining']));
    }
    assert.deepEqual(seen, [2, 1, 0]);
    const limited = await t.app.inject({ url: '/.well-known/jwks.json', remoteAddress: ip });
    assert.equal(limited.statusCode, 429);
    const body = json(limited);
    assert.equal(body.error.code, 'rate_limited');
    assert.equal(body.error.details.limit, 3);
    assert.equal(body.error.details.window, 60);
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.ok(Number(limited.headers['ratelimit-reset']) >= 1);
  });

  it('keys the limit by client IP', async () => {
    const res = await t.app.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.8' });
    assert.equal(res.statusCode, 200);
  });

  it('is switched off by RATE_LIMIT_MULTIPLIER=0', async () => {
    const off = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '0' } });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await off.app.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.9' });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      }
    } finally {
      await off.close();
    }
  });

  it('falls back to per-instance memory counters when Redis is unreachable', async () => {
    const down = await buildTestApp({
      env: { RATE_LIMIT_MULTIPLIER: '0.005', REDIS_URL: 'redis://127.0.0.1:1' },
    });
    try {
      const ip = '198.51.100.10';
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await down.app.inject({ url: '/.well-known/jwks.json', remoteAddress: ip })).statusCode,
          200,
        );
      }
      assert.equal(
        (await down.app.inject({ url: '/.well-known/jwks.json', remoteAddress: ip })).statusCode,
        429,
      );
    } finally {
      await down.close();
    }
  });

  it('shares one budget between instances on the same store', async () => {
    if (!process.env.REDIS_URL) {
      // Without Redis each instance counts alone; the shared case is exercised when REDIS_URL is set.
      const other = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '0.005' } });
      try {
        const res = await other.app.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.7' });
        assert.equal(res.statusCode, 200);
      } finally {
        await other.close();
      }
      return;
    }
    const a = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '0.005' } });
    const b = await buildTestApp({
      env: { RATE_LIMIT_MULTIPLIER: '0.005', REDIS_PREFIX: a.ctx.config.redisPrefix },
    });
    try {
      const ip = '203.0.113.5';
      for (const app of [a, b, a]) {
        assert.equal(
          (await app.app.inject({ url: '/.well-known/jwks.json', remoteAddress: ip })).statusCode,
          200,
        );
      }
      assert.equal(
        (await b.app.inject({ url: '/.well-known/jwks.json', remoteAddress: ip })).statusCode,
        429,
      );
    } finally {
      await a.close();
      await b.close();
    }
  });
});
