import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Instance, PrivateRedis, runEnv, storesOrSkip, until } from './cluster.js';

/**
 * Redis flushed, then stopped under load, then back (a private redis-server the test owns): the
 * rate limits fall back to per-instance memory as the README says, no request fails because of it,
 * and the instances share one budget again once Redis answers.
 */
describe('chaos: Redis flushed and stopped under load', { timeout: 180_000 }, () => {
  let redis: PrivateRedis | undefined;
  const instances: Instance[] = [];
  after(async () => {
    for (const i of instances) await i.stop().catch(() => {});
    await redis?.down().catch(() => {});
  });

  it('falls back per instance, fails nothing, and shares again when Redis returns', async (tc) => {
    if (!storesOrSkip(tc)) return;
    redis = await PrivateRedis.start();
    // 600 × 1/30 = 20 discovery requests a minute per client IP; the IP comes from X-Forwarded-For.
    const env = runEnv({
      REDIS_URL: redis.url,
      RATE_LIMIT_MULTIPLIER: String(1 / 30),
      TRUST_PROXY: '127.0.0.1',
    });
    const a = await Instance.start('A', env);
    instances.push(a);
    const b = await Instance.start('B', env);
    instances.push(b);

    const statuses: number[] = [];
    let slowest = 0;
    /** `n` discovery requests from `ip`, alternating between the instances; how many were served. */
    const burst = async (ip: string, n: number, only?: Instance): Promise<number> => {
      let ok = 0;
      for (let i = 0; i < n; i++) {
        const target = only ?? (i % 2 === 0 ? a : b);
        const started = performance.now();
        const res = await target.fetch('/.well-known/openid-configuration', {
          headers: { 'x-forwarded-for': ip },
        });
        await res.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - started);
        statuses.push(res.status);
        if (res.status === 200) ok++;
      }
      return ok;
    };

    assert.equal(await burst('198.51.100.1', 30), 20, 'one budget shared by both instances');
    redis.flush();
    assert.equal(await burst('198.51.100.2', 30), 20, 'after FLUSHALL: still one shared budget');

    await redis.down();
    // Per instance now: each serves its own 20.
    assert.equal(await burst('198.51.100.3', 25, a), 20, 'A keeps limiting on its own');
    assert.equal(await burst('198.51.100.3', 25, b), 20, 'B keeps limiting on its own');
    assert.equal(await burst('198.51.100.4', 60), 40, 'two budgets while Redis is down');

    await redis.up();
    // The clients reconnect by themselves; wait until both write to Redis again.
    let probe = 0;
    await until(
      async () => {
        const ip = `203.0.113.${++probe}`;
        await burst(ip, 2);
        const key = (i: string) => `${env.REDIS_PREFIX}rl:wellKnown:${i}`;
        const v = execFileSync('redis-cli', ['-p', String(redis!.port), 'get', key(ip)], {
          encoding: 'utf8',
        }).trim();
        return v === '2';
      },
      30_000,
      'both instances to count in Redis again',
    );
    assert.equal(await burst('198.51.100.5', 30), 20, 'one shared budget again');

    assert.deepEqual(
      statuses.filter((s) => s !== 200 && s !== 429),
      [],
      'no request failed because of Redis',
    );
    assert.ok(slowest < 2000, `slowest request ${Math.round(slowest)} ms`);
    for (const i of [a, b]) assert.equal(i.child.exitCode, null, `${i.name} is still running`);
    tc.diagnostic(`${statuses.length} requests, slowest ${Math.round(slowest)} ms, only 200 and 429`);
  });
});
