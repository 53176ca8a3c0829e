import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { networkSourceKey } from '../../src/http/network-source.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const base = { ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), DATA_DIR: '/nonexistent-gh-ns' };

/** 600/min/IP on /.well-known scaled by 0.005 → 3 per minute per source. */
const SCALE = { RATE_LIMIT_MULTIPLIER: '0.005' };

async function statuses(
  t: TestApp,
  requests: Array<{ remoteAddress: string; headers?: Record<string, string> }>,
): Promise<number[]> {
  const out: number[] = [];
  for (const r of requests)
    out.push((await t.app.inject({ url: '/.well-known/jwks.json', ...r })).statusCode);
  return out;
}

describe('TRUST_PROXY', () => {
  it('reads true as one hop, a number as a hop count, and a list of addresses/CIDRs', () => {
    assert.equal(loadConfig(base).trustProxy, false);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: 'true' }).trustProxy, 1);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 192.0.2.1,2001:db8::/32' }).trustProxy, [
      '10.0.0.0/8',
      '192.0.2.1',
      '2001:db8::/32',
    ]);
    assert.deepEqual(loadConfig({ ...base, TRUST_PROXY: 'loopback' }).trustProxy, ['loopback']);
  });

  for (const value of ['everything', '10.0.0.0/33', '10.0.0.1/8/1', 'lb.internal', '99']) {
    it(`refuses TRUST_PROXY=${value} with one line naming the variable`, () => {
      assert.throws(
        () => loadConfig({ ...base, TRUST_PROXY: value }),
        (e: unknown) =>
          e instanceof ConfigError && /TRUST_PROXY/.test(e.message) && !e.message.includes('\n'),
      );
    });
  }

  describe('=true behind one load balancer', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ env: { ...SCALE, TRUST_PROXY: 'true' } });
    });
    after(() => t.close());

    it('takes the address the load balancer appended, so a forged left-most entry buys no new bucket', async () => {
      const lb = '10.0.0.1';
      const client = '203.0.113.9';
      const forged = ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4', '5.5.5.5'].map((f) => ({
        remoteAddress: lb,
        headers: { 'x-forwarded-for': `${f}, ${client}` },
      }));
      assert.deepEqual(await statuses(t, forged), [200, 200, 200, 429, 429]);
      // Another client behind the same load balancer has its own budget.
      assert.deepEqual(
        await statuses(t, [{ remoteAddress: lb, headers: { 'x-forwarded-for': '203.0.113.10' } }]),
        [200],
      );
    });
  });

  describe('unset', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ env: SCALE });
    });
    after(() => t.close());

    it('ignores X-Forwarded-For and keys on the socket address', async () => {
      const reqs = ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'].map((f) => ({
        remoteAddress: '198.51.100.77',
        headers: { 'x-forwarded-for': f },
      }));
      assert.deepEqual(await statuses(t, reqs), [200, 200, 200, 429]);
    });
  });
});

describe('network source of per-IP limits', () => {
  it('keys IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its network', () => {
    assert.equal(networkSourceKey('192.0.2.1', 64), '192.0.2.1');
    assert.equal(networkSourceKey('::ffff:192.0.2.1', 64), '192.0.2.1');
    assert.equal(networkSourceKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64), '2001:db8:1:2::/64');
    assert.equal(networkSourceKey('2001:DB8:1:2::1', 64), '2001:db8:1:2::/64');
    assert.equal(networkSourceKey('2001:db8:1:2::1', 48), '2001:db8:1::/48');
    assert.equal(networkSourceKey('2001:db8:1:2::1', 128), '2001:db8:1:2::1');
    assert.equal(networkSourceKey('fe80::1%eth0', 64), 'fe80::/64');
  });

  it('reads RATE_LIMIT_IPV6_PREFIX (default 64, 1–128)', () => {
    assert.equal(loadConfig(base).rateLimitIpv6Prefix, 64);
    assert.equal(loadConfig({ ...base, RATE_LIMIT_IPV6_PREFIX: '56' }).rateLimitIpv6Prefix, 56);
    assert.throws(
      () => loadConfig({ ...base, RATE_LIMIT_IPV6_PREFIX: '129' }),
      (e: unknown) => e instanceof ConfigError && /RATE_LIMIT_IPV6_PREFIX/.test(e.message),
    );
  });

  describe('over HTTP', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ env: SCALE });
    });
    after(() => t.close());

    it('gives one /64 one bucket however many addresses it uses', async () => {
      const reqs = ['::1', '::2', '::3', '::ffff:1', ':abcd:ef01:2345:6789'].map((suffix) => ({
        remoteAddress: `2001:db8:7:7${suffix}`,
      }));
      assert.deepEqual(await statuses(t, reqs), [200, 200, 200, 429, 429]);
      // The neighbouring /64 is someone else.
      assert.deepEqual(await statuses(t, [{ remoteAddress: '2001:db8:7:8::1' }]), [200]);
    });

    it('counts an IPv4-mapped address against its IPv4 bucket', async () => {
      const reqs = ['192.0.2.50', '::ffff:192.0.2.50', '192.0.2.50', '::ffff:192.0.2.50'].map((a) => ({
        remoteAddress: a,
      }));
      assert.deepEqual(await statuses(t, reqs), [200, 200, 200, 429]);
    });
  });
});

describe('every per-IP limit', () => {
  it('keys on ctx.rateLimits.source(req), never on req.ip directly', () => {
    const src = new URL('../../src', import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) => {
        const p = join(dir, n);
        return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const offenders: string[] = [];
    for (const f of files(src)) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/rateLimits\.(guard|consume)\([^;]*?\breq\.ip\b/gs))
        offenders.push(`${f.slice(src.length)}: ${m[0].slice(0, 80)}`);
    }
    assert.deepEqual(offenders, []);
  });
});
