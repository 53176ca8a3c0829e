import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.js';
import { type BalanceEntry, MemoryBalanceCache } from '../../src/modules/token-gates/token-gates.check.js';

describe('in-process balance cache', () => {
  const entry = (clock: ManualClock, amount: bigint): BalanceEntry => ({
    walletFound: true,
    amount,
    fetchedAt: clock.nowMs(),
  });

  it('keeps one balance per (wallet, mint) until the TTL, by the injected clock', async () => {
    const clock = new ManualClock();
    const cache = new MemoryBalanceCache(clock, 300_000, 10);
    await cache.set('mintA', 'wallet1', entry(clock, 5n));
    await cache.set('mintB', 'wallet1', entry(clock, 7n));
    await cache.set('mintA', 'wallet2', entry(clock, 9n));
    assert.equal(cache.get('mintA', 'wallet1')?.amount, 5n);
    assert.equal(cache.get('mintB', 'wallet1')?.amount, 7n);
    assert.equal(cache.get('mintA', 'wallet2')?.amount, 9n);
    assert.equal(cache.get('mintB', 'wallet2'), undefined);
    assert.equal(cache.size, 3);

    await cache.set('mintA', 'wallet1', entry(clock, 6n));
    assert.equal(cache.get('mintA', 'wallet1')?.amount, 6n, 'a new read replaces the balance');
    assert.equal(cache.size, 3);

    clock.advance(299.999);
    assert.equal(cache.get('mintA', 'wallet1')?.amount, 6n);
    clock.advance(0.001);
    assert.equal(cache.get('mintA', 'wallet1'), undefined, 'expired at exactly 5 minutes');
    assert.equal(cache.size, 2, 'an expired balance is dropped when read');
  });

  it('never holds more than its bound, dropping the wallets read longest ago', async () => {
    const clock = new ManualClock();
    const cache = new MemoryBalanceCache(clock, 300_000, 3);
    await cache.set('mintA', 'w1', entry(clock, 1n));
    await cache.set('mintA', 'w2', entry(clock, 2n));
    await cache.set('mintB', 'w2', entry(clock, 3n));
    await cache.set('mintA', 'w1', entry(clock, 4n)); // w1 read again: now the newest
    await cache.set('mintA', 'w3', entry(clock, 5n)); // 4 balances: w2 (two of them) goes
    assert.equal(cache.size, 2);
    assert.equal(cache.get('mintA', 'w2'), undefined);
    assert.equal(cache.get('mintB', 'w2'), undefined);
    assert.equal(cache.get('mintA', 'w1')?.amount, 4n);
    assert.equal(cache.get('mintA', 'w3')?.amount, 5n);
    for (let i = 0; i < 100; i++) await cache.set('mintA', `x${i}`, entry(clock, BigInt(i)));
    assert.equal(cache.size, 3);
    assert.equal(cache.get('mintA', 'x99')?.amount, 99n);
  });
});
