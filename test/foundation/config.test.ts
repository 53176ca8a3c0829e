import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';

const KEY = Buffer.alloc(32, 1).toString('base64');
const base = { ENCRYPTION_KEY: KEY, DATA_DIR: '/nonexistent-gatehouse-config-test' };

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(base);
    assert.equal(c.port, 3000);
    assert.equal(c.baseUrl, 'http://localhost:3000');
    assert.equal(c.issuer, 'http://localhost:3000');
    assert.equal(c.rateLimitMultiplier, 1);
    assert.equal(c.webhookAllowPrivateNetworks, false);
    assert.deepEqual(c.webhookRetrySchedule, [1, 4, 16, 64, 256]);
  });

  it('strips a trailing slash from BASE_URL', () => {
    assert.equal(
      loadConfig({ ...base, BASE_URL: 'https://id.example.com/' }).issuer,
      'https://id.example.com',
    );
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ BASE_URL: 'ftp://x' }, /BASE_URL/],
    [{ BASE_URL: 'not a url' }, /BASE_URL/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ ENCRYPTION_KEY: 'c2hvcnQ=' }, /ENCRYPTION_KEY/],
    [{ RATE_LIMIT_MULTIPLIER: '-1' }, /RATE_LIMIT_MULTIPLIER/],
    [{ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' }, /WEBHOOK_ALLOW_PRIVATE_NETWORKS/],
    [{ WEBHOOK_RETRY_SCHEDULE: '1,two' }, /WEBHOOK_RETRY_SCHEDULE/],
    [{ SOLANA_RPC_URL: 'ws://x' }, /SOLANA_RPC_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ PROVIDER_GOOGLE_TOKEN_URL: 'nope' }, /PROVIDER_GOOGLE_/],
  ];
  for (const [env, name] of bad) {
    it(`refuses ${JSON.stringify(env)} with one line naming the variable`, () => {
      assert.throws(
        () => loadConfig({ ...base, ...env }),
        (e: unknown) => e instanceof ConfigError && name.test(e.message) && !e.message.includes('\n'),
      );
    });
  }

  it('requires ENCRYPTION_KEY in production', () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', DATA_DIR: base.DATA_DIR }),
      (e: unknown) => e instanceof ConfigError && /ENCRYPTION_KEY/.test(e.message),
    );
  });

  it('honours every setting in production too', () => {
    const c = loadConfig({
      ...base,
      NODE_ENV: 'production',
      RATE_LIMIT_MULTIPLIER: '0',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    assert.equal(c.rateLimitMultiplier, 0);
    assert.equal(c.webhookAllowPrivateNetworks, true);
  });

  it('reads provider defaults and overrides', () => {
    const c = loadConfig({
      ...base,
      PROVIDER_GOOGLE_CLIENT_ID: 'gid',
      PROVIDER_GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token',
      PROVIDER_TELEGRAM_BOT_USERNAME: 'bot',
    });
    assert.equal(c.providers.google.clientId, 'gid');
    assert.equal(c.providers.google.tokenUrl, 'http://127.0.0.1:9/token');
    assert.equal(c.providers.telegram.botUsername, 'bot');
  });

  it('documents every environment variable it reads in the README', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const source = readFileSync(new URL('../../src/config/index.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/\b(?:env, |env\.)'?([A-Z][A-Z0-9_]+)'?/g)].map((m) => m[1]));
    for (const name of read) assert.ok(readme.includes(`\`${name}\``), `README does not document ${name}`);
  });
});
