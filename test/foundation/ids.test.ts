import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId, newSecret, randomAlphanumeric } from '../../src/lib/ids.js';

describe('ids and secrets (drawn from a pooled CSPRNG buffer)', () => {
  it('makes ids of 20 alphanumerics after the prefix, and other lengths and alphabets on request', () => {
    const id = newId('gate_');
    assert.match(id, /^gate_[A-Za-z0-9]{20}$/);
    assert.match(randomAlphanumeric(64), /^[A-Za-z0-9]{64}$/);
    assert.equal(randomAlphanumeric(0), '');
    const userCode = randomAlphanumeric(500, 'BCDFGHJKLMNPQRSTVWXZ');
    assert.match(userCode, /^[BCDFGHJKLMNPQRSTVWXZ]{500}$/);
    // Longer than the pool: the buffer is refilled with room for the whole request.
    assert.match(randomAlphanumeric(10_000), /^[A-Za-z0-9]{10000}$/);
  });

  it('makes 256-bit secrets that decode to 32 bytes', () => {
    const secret = newSecret('ghsk_');
    assert.match(secret, /^ghsk_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret.slice(5), 'base64url').length, 32);
  });

  it('never hands out the same bytes twice, across many refills of the pool', () => {
    // 2,000 secrets are 64,000 bytes: sixteen refills. Bytes handed out twice (an offset that did
    // not move, a refill that kept the old buffer) would repeat whole 8-byte windows.
    const windows = new Set<string>();
    let count = 0;
    for (let i = 0; i < 2_000; i++) {
      const bytes = Buffer.from(newSecret(), 'base64url');
      for (let at = 0; at < 32; at += 8) {
        windows.add(bytes.subarray(at, at + 8).toString('hex'));
        count++;
      }
      newId(); // interleaved, as in a request
    }
    assert.equal(windows.size, count);
    const ids = new Set(Array.from({ length: 20_000 }, () => newId()));
    assert.equal(ids.size, 20_000);
  });

  it('uses every symbol of the alphabet about equally (no modulo bias)', () => {
    // 62 symbols over 248,000 draws: about 4,000 each; a biased mapping (b % 62 over 0–255) would
    // give the first 8 symbols ~5,000 (+25 %). The bounds are over 12 standard deviations wide.
    const counts = new Map<string, number>();
    for (const ch of randomAlphanumeric(248_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    assert.equal(counts.size, 62);
    for (const [ch, n] of counts) assert.ok(n > 3_250 && n < 4_750, `${ch}: ${n}`);
  });
});
