import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc } from './fake-rpc.js';

// RATE_LIMIT_MULTIPLIER 0.05: gate checks 30/min/IP, refresh 3/min/IP, writes 2/min/org, reads 3/min/org.
describe('token gate rate limits', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  let gateId: string;
  let wallet: string;

  const check = (refresh = false, ip = '127.0.0.1') =>
    t.app.inject({
      url: `/identity/organizations/${org.slug}/token-gates/${gateId}/check?walletAddress=${wallet}${refresh ? '&refresh=true' : ''}`,
      remoteAddress: ip,
    });

  function assertLimited(
    res: { statusCode: number; body: string; headers: Record<string, unknown> },
    limit: number,
  ) {
    assert.equal(res.statusCode, 429, res.body);
    const body = json(res);
    assert.equal(body.error.code, 'rate_limited');
    assert.equal(body.error.details.limit, limit);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal(res.headers['ratelimit-limit'], String(limit));
    assert.equal(res.headers['ratelimit-remaining'], '0');
    assert.ok(Number(res.headers['ratelimit-reset']) >= 1);
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url, RATE_LIMIT_MULTIPLIER: '0.05' } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    const mint = rpc.addMint();
    wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '10');
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/token-gates`,
      headers: owner.auth,
      payload: { name: 'Limited', mintAddress: mint, minHoldings: '1' },
    });
    assert.equal(res.statusCode, 201);
    gateId = json(res).id;
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });

  it('limits refresh=true to 60/min per IP (3 here), apart from plain checks', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await check(true, '10.0.0.1');
      assert.equal(res.statusCode, 200);
      // The check is the one public hot path: its answers carry RateLimit-* only when refused.
      assert.equal(res.headers['ratelimit-limit'], undefined);
    }
    const calls = rpc.totalCalls;
    assertLimited(await check(true, '10.0.0.1'), 3);
    assert.equal(rpc.totalCalls, calls, 'a refused refresh asks nothing of the chain');
    assert.equal((await check(false, '10.0.0.1')).statusCode, 200, 'plain checks have their own budget');
    assert.equal((await check(true, '10.0.0.2')).statusCode, 200, 'per IP');
  });

  it('limits plain checks to 600/min per IP (30 here)', async () => {
    for (let i = 0; i < 30; i++) assert.equal((await check(false, '10.0.1.1')).statusCode, 200);
    assertLimited(await check(false, '10.0.1.1'), 30);
    assert.equal((await check(false, '10.0.1.2')).statusCode, 200);
  });

  it('limits writes to 30/min per org (2 here) and reads to 60/min per org (3 here)', async () => {
    const base = `/identity/organizations/${org.slug}/token-gates`;
    // One write was spent creating the gate in before().
    const patch = () =>
      t.app.inject({
        method: 'PATCH',
        url: `${base}/${gateId}`,
        headers: owner.auth,
        payload: { name: 'Renamed' },
      });
    assert.equal((await patch()).statusCode, 200);
    assertLimited(await patch(), 2);
    for (let i = 0; i < 3; i++)
      assert.equal((await t.app.inject({ url: base, headers: owner.auth })).statusCode, 200);
    assertLimited(await t.app.inject({ url: `${base}/${gateId}`, headers: owner.auth }), 3);
  });
});
