import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import bs58 from 'bs58';
import { sql } from 'kysely';
import { gateCheckerOf, serializeCheckResult } from '../../src/modules/token-gates/token-gates.check.js';
import type { CheckResult } from '../../src/modules/token-gates/token-gates.schemas.js';
import { disableOrgTokenGates } from '../../src/modules/token-gates/token-gates.service.js';
import {
  buildTestApp,
  cachesServing,
  createUser,
  json,
  type TestApp,
  type TestUser,
} from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from './fake-rpc.js';

describe('token gate check', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  let mint: string;
  let mint2022: string;
  let gateId: string;

  async function createGate(body: Record<string, unknown>, o: TestOrg = org): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${o.slug}/token-gates`,
      headers: owner.auth,
      payload: { name: 'Holders', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id;
  }

  function check(wallet: string, opts: { gate?: string; slug?: string; refresh?: string } = {}) {
    const q = new URLSearchParams({ walletAddress: wallet });
    if (opts.refresh !== undefined) q.set('refresh', opts.refresh);
    return t.app.inject(
      `/identity/organizations/${opts.slug ?? org.slug}/token-gates/${opts.gate ?? gateId}/check?${q}`,
    );
  }

  const tokenCalls = () => rpc.calls.get('getTokenAccountsByOwner') ?? 0;

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    mint = rpc.addMint('spl-token');
    mint2022 = rpc.addMint('spl-token-2022');
    gateId = await createGate({ mintAddress: mint, minHoldings: '1000' });
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });
  beforeEach(() => {
    rpc.mode = 'ok';
    rpc.resetCalls();
  });

  it('grants access to a wallet holding at least minHoldings, with only the three fields', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '1500');
    const res = await check(wallet);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { hasAccess: true, balance: '1500', reason: null });
    assert.equal(res.headers.age, undefined, 'a fresh answer carries no Age');
    assert.ok(!res.body.includes(mint), 'never the mint address');
    assert.equal(tokenCalls(), 1);
  });

  it('grants access at exactly minHoldings and sums every token account of the wallet', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '400');
    rpc.addTokenAccount(wallet, mint, '600');
    rpc.addTokenAccount(wallet, mint2022, '99999');
    assert.deepEqual(json(await check(wallet)), { hasAccess: true, balance: '1000', reason: null });
  });

  it('answers insufficientBalance with the balance below minHoldings', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '999');
    assert.deepEqual(json(await check(wallet)), {
      hasAccess: false,
      balance: '999',
      reason: 'insufficientBalance',
    });
  });

  it('answers insufficientBalance with balance "0" for a known wallet without token accounts', async () => {
    const wallet = rpc.addWallet();
    assert.deepEqual(json(await check(wallet)), {
      hasAccess: false,
      balance: '0',
      reason: 'insufficientBalance',
    });
    assert.equal(rpc.calls.get('getAccountInfo'), 1);
  });

  it('grants a known wallet holding nothing when minHoldings is 0', async () => {
    const zeroGate = await createGate({ mintAddress: mint, minHoldings: '0' });
    const wallet = rpc.addWallet();
    assert.deepEqual(json(await check(wallet, { gate: zeroGate })), {
      hasAccess: true,
      balance: '0',
      reason: null,
    });
  });

  it('answers walletNotFound with a null balance for an address the chain does not know, even at minHoldings 0', async () => {
    const zeroGate = await createGate({ mintAddress: mint, minHoldings: '0' });
    const unknown = randomAddress();
    assert.deepEqual(json(await check(unknown)), {
      hasAccess: false,
      balance: null,
      reason: 'walletNotFound',
    });
    assert.deepEqual(json(await check(unknown, { gate: zeroGate })), {
      hasAccess: false,
      balance: null,
      reason: 'walletNotFound',
    });
  });

  it('counts token accounts of a wallet whose own account is closed (not walletNotFound)', async () => {
    const wallet = randomAddress();
    rpc.addTokenAccount(wallet, mint, '5');
    assert.deepEqual(json(await check(wallet)), {
      hasAccess: false,
      balance: '5',
      reason: 'insufficientBalance',
    });
    assert.equal(
      rpc.calls.get('getAccountInfo'),
      undefined,
      'token accounts prove the wallet; no second call',
    );
  });

  it('reads Token-2022 mints the same way', async () => {
    const gate = await createGate({ mintAddress: mint2022, minHoldings: '10' });
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint2022, '7');
    rpc.addTokenAccount(wallet, mint2022, '3');
    rpc.addTokenAccount(wallet, mint, '1000000');
    assert.deepEqual(json(await check(wallet, { gate })), { hasAccess: true, balance: '10', reason: null });
  });

  it('compares amounts beyond 2^53 exactly', async () => {
    const big = 2n ** 64n - 1n; // a full u64 account
    const min = big + 9_007_199_254_740_993n; // 2^53 + 1: lost by any floating point
    const gate = await createGate({ mintAddress: mint, minHoldings: min.toString() });
    const exact = rpc.addWallet();
    rpc.addTokenAccount(exact, mint, big);
    rpc.addTokenAccount(exact, mint, 9_007_199_254_740_993n);
    assert.deepEqual(json(await check(exact, { gate })), {
      hasAccess: true,
      balance: min.toString(),
      reason: null,
    });
    const short = rpc.addWallet();
    rpc.addTokenAccount(short, mint, big);
    rpc.addTokenAccount(short, mint, 9_007_199_254_740_992n);
    assert.deepEqual(json(await check(short, { gate })), {
      hasAccess: false,
      balance: (min - 1n).toString(),
      reason: 'insufficientBalance',
    });
  });

  it('answers gateDisabled without asking the chain', async () => {
    const gate = await createGate({ mintAddress: mint, minHoldings: '1', enabled: false });
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '100');
    // The second answer comes from the cached lookup, on the route's synchronous path.
    for (let i = 0; i < 2; i++) {
      const res = await check(wallet, { gate });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json(res), { hasAccess: false, balance: null, reason: 'gateDisabled' });
      assert.equal(res.headers.age, undefined, 'not a cached balance');
    }
    assert.equal(rpc.totalCalls, 0);
  });

  it('serves a cached balance for 5 minutes with its Age, then reads the chain again', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '2000');
    assert.equal((await check(wallet)).headers.age, undefined);
    assert.equal(tokenCalls(), 1);

    rpc.setBalance(wallet, mint, '10');
    t.clock.advance(42);
    const cached = await check(wallet);
    assert.deepEqual(json(cached), { hasAccess: true, balance: '2000', reason: null });
    assert.equal(cached.headers.age, '42');
    assert.equal(tokenCalls(), 1, 'the cached answer made no RPC call');

    t.clock.advance(299 - 42);
    assert.equal((await check(wallet)).headers.age, '299');
    assert.equal(tokenCalls(), 1);

    t.clock.advance(2); // 301 s after the read
    const fresh = await check(wallet);
    assert.deepEqual(json(fresh), { hasAccess: false, balance: '10', reason: 'insufficientBalance' });
    assert.equal(fresh.headers.age, undefined);
    assert.equal(tokenCalls(), 2);
  });

  it('caches per (wallet, mint): two gates on one mint share the balance', async () => {
    const other = await createGate({ mintAddress: mint, minHoldings: '1' });
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '50');
    assert.equal(json(await check(wallet)).reason, 'insufficientBalance');
    const res = await check(wallet, { gate: other });
    assert.deepEqual(json(res), { hasAccess: true, balance: '50', reason: null });
    assert.equal(res.headers.age, '0');
    assert.equal(tokenCalls(), 1);
  });

  it('refresh=true reads the chain past the cache and refreshes the cache', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '1');
    await check(wallet);
    rpc.setBalance(wallet, mint, '5000');
    t.clock.advance(10);
    assert.equal(json(await check(wallet)).balance, '1');

    const refreshed = await check(wallet, { refresh: 'true' });
    assert.deepEqual(json(refreshed), { hasAccess: true, balance: '5000', reason: null });
    assert.equal(refreshed.headers.age, undefined);
    assert.equal(tokenCalls(), 2);

    t.clock.advance(3);
    const after = await check(wallet);
    assert.equal(json(after).balance, '5000');
    assert.equal(after.headers.age, '3');
    assert.equal(tokenCalls(), 2);
  });

  it('refuses a refresh value other than "true" with 422', async () => {
    const wallet = rpc.addWallet();
    for (const value of ['false', '1', 'TRUE', '']) {
      const res = await check(wallet, { refresh: value });
      assert.equal(res.statusCode, 422, value);
      assert.equal(json(res).error.code, 'validation_failed');
      assert.equal(json(res).error.details.fields[0].field, 'refresh');
    }
    assert.equal(rpc.totalCalls, 0);
  });

  it('refuses a walletAddress that is not a base58 32-byte key with 422 validation_failed', async () => {
    const cases = [
      '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', // not base58
      bs58.encode(Buffer.alloc(31, 9)), // base58, 31 bytes
      bs58.encode(Buffer.alloc(33, 9)), // base58, 33 bytes
      'abc',
      '1'.repeat(101), // past the schema's 100 characters
    ];
    for (const wallet of cases) {
      const res = await check(wallet);
      assert.equal(res.statusCode, 422, wallet);
      const body = json(res);
      assert.equal(body.error.code, 'validation_failed');
      assert.equal(body.error.details.fields[0].field, 'walletAddress');
    }
    const missing = await t.app.inject(`/identity/organizations/${org.slug}/token-gates/${gateId}/check`);
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(json(missing).error.details.fields, [
      { field: 'walletAddress', code: 'required', message: 'is required' },
    ]);
    const extra = await t.app.inject(
      `/identity/organizations/${org.slug}/token-gates/${gateId}/check?walletAddress=${randomAddress()}&mint=x`,
    );
    assert.equal(extra.statusCode, 422);
    assert.equal(json(extra).error.details.fields[0].field, 'mint');
    const twice = await t.app.inject(
      `/identity/organizations/${org.slug}/token-gates/${gateId}/check?walletAddress=${randomAddress()}&walletAddress=${randomAddress()}`,
    );
    assert.equal(twice.statusCode, 422);
    assert.equal(json(twice).error.details.fields[0].field, 'walletAddress');
    assert.equal(rpc.totalCalls, 0);
  });

  it('lets any web page read its answers, errors included (CORS, no credentials)', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '1500');
    const fromPage = (url: string) => t.app.inject({ url, headers: { origin: 'https://shop.example.com' } });
    const base = `/identity/organizations/${org.slug}/token-gates`;
    for (const [url, status] of [
      [`${base}/${gateId}/check?walletAddress=${wallet}`, 200],
      [`${base}/${gateId}/check?walletAddress=not-base58`, 422],
      [`${base}/gate_aaaaaaaaaaaaaaaaaaaa/check?walletAddress=${wallet}`, 404],
    ] as const) {
      const res = await fromPage(url);
      assert.equal(res.statusCode, status, url);
      assert.equal(res.headers['access-control-allow-origin'], '*', url);
      assert.equal(res.headers['access-control-allow-credentials'], undefined, 'never with credentials');
      assert.match(String(res.headers['access-control-expose-headers']), /\bAge\b.*\bRetry-After\b/);
    }
    // Without an Origin (server to server) the answer says nothing it does not need to.
    const plain = await check(wallet);
    assert.equal(plain.headers['access-control-allow-origin'], '*');
    assert.equal(plain.headers['access-control-expose-headers'], undefined);
  });

  it('answers 404 for an unknown gate, a malformed id, or another org slug', async () => {
    const wallet = rpc.addWallet();
    const otherOwner = await createUser(t);
    const otherOrg = await seedOrg(t, otherOwner);
    for (const opts of [
      { gate: 'gate_aaaaaaaaaaaaaaaaaaaa' },
      { gate: 'not-a-gate' },
      { slug: otherOrg.slug },
      { slug: 'no-such-org' },
    ]) {
      // Twice: the second miss is answered from the cached lookup, synchronously.
      for (let i = 0; i < 2; i++) {
        const res = await check(wallet, opts);
        assert.equal(res.statusCode, 404, JSON.stringify(opts));
        assert.equal(json(res).error.code, 'not_found');
      }
    }
    assert.equal(rpc.totalCalls, 0);
  });

  it('sees this instance’s writes at once: disabled, re-enabled, deleted', async () => {
    const gate = await createGate({ mintAddress: mint, minHoldings: '1' });
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '1');
    assert.equal(json(await check(wallet, { gate })).hasAccess, true);
    const patch = (payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'PATCH',
        url: `/identity/organizations/${org.slug}/token-gates/${gate}`,
        headers: owner.auth,
        payload,
      });
    assert.equal((await patch({ enabled: false })).statusCode, 200);
    assert.equal(json(await check(wallet, { gate })).reason, 'gateDisabled');
    assert.equal((await patch({ enabled: true, minHoldings: '2' })).statusCode, 200);
    assert.equal(json(await check(wallet, { gate })).reason, 'insufficientBalance');
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/identity/organizations/${org.slug}/token-gates/${gate}`,
      headers: owner.auth,
    });
    assert.equal(del.statusCode, 204);
    assert.equal((await check(wallet, { gate })).statusCode, 404);
  });

  it('answers 404 once the org is deleted (disableOrgTokenGates in the deletion)', async () => {
    const o = await seedOrg(t, owner);
    const gate = await createGate({ mintAddress: mint, minHoldings: '0' }, o);
    const wallet = rpc.addWallet();
    assert.equal((await check(wallet, { gate, slug: o.slug })).statusCode, 200);
    await t.ctx.db.transaction().execute(async (trx) => {
      await trx.updateTable('orgs').set({ deleted_at: t.clock.now() }).where('id', '=', o.id).execute();
      assert.deepEqual(await disableOrgTokenGates(trx, o.id, t.clock), [gate]);
    });
    assert.equal((await check(wallet, { gate, slug: o.slug })).statusCode, 404);
    const row = await t.ctx.db
      .selectFrom('token_gates')
      .select('enabled')
      .where('id', '=', gate)
      .executeTakeFirst();
    assert.equal(row?.enabled, false);
  });

  it('answers 404 and disables the gates when the org is deleted through the API', async () => {
    const o = await seedOrg(t, owner);
    const gate = await createGate({ mintAddress: mint, minHoldings: '0' }, o);
    const wallet = rpc.addWallet();
    assert.equal((await check(wallet, { gate, slug: o.slug })).statusCode, 200);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/identity/organizations/${o.slug}`,
      headers: owner.auth,
    });
    assert.equal(del.statusCode, 204, del.body);
    const res = await check(wallet, { gate, slug: o.slug });
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).error.code, 'not_found');
    const row = await t.ctx.db
      .selectFrom('token_gates')
      .select('enabled')
      .where('id', '=', gate)
      .executeTakeFirst();
    assert.equal(row?.enabled, false);
  });

  it('answers 502 bad_gateway when the RPC node fails, and caches nothing', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '5000');
    for (const mode of ['rpcError', 'http500', 'garbage'] as const) {
      rpc.mode = mode;
      const res = await check(wallet);
      assert.equal(res.statusCode, 502, mode);
      assert.equal(json(res).error.code, 'bad_gateway');
      assert.ok(!res.body.includes(rpc.url), 'the RPC URL stays private');
    }
    rpc.mode = 'ok';
    rpc.resetCalls();
    const res = await check(wallet);
    assert.deepEqual(json(res), { hasAccess: true, balance: '5000', reason: null });
    assert.equal(res.headers.age, undefined);
    assert.equal(tokenCalls(), 1);
  });

  it('answers 502 for a gate whose mint the chain does not know', async () => {
    const gate = await createGate({ mintAddress: randomAddress(), minHoldings: '1' });
    const res = await check(rpc.addWallet(), { gate });
    assert.equal(res.statusCode, 502);
    assert.equal(json(res).error.code, 'bad_gateway');
  });

  it('answers 504 gateway_timeout when the RPC node does not answer in time', async () => {
    const checker = gateCheckerOf(t.ctx);
    assert.ok(checker);
    const saved = checker.rpc.timeoutMs;
    checker.rpc.timeoutMs = 50;
    try {
      rpc.mode = 'hang';
      const res = await check(rpc.addWallet());
      assert.equal(res.statusCode, 504);
      assert.equal(json(res).error.code, 'gateway_timeout');
    } finally {
      checker.rpc.timeoutMs = saved;
    }
  });

  it('shares one RPC call between concurrent checks of the same wallet and mint', async () => {
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint, '1234');
    const other = await createGate({ mintAddress: mint, minHoldings: '2000' });
    const checker = gateCheckerOf(t.ctx);
    assert.ok(checker);
    const joinedBefore = checker.stats.joined;
    rpc.hold();
    const pending = [
      ...Array.from({ length: 8 }, () => check(wallet)),
      check(wallet, { gate: other }),
      check(wallet, { refresh: 'true' }),
    ];
    while (checker.stats.joined < joinedBefore + 9) await new Promise((r) => setImmediate(r));
    rpc.release();
    const results = await Promise.all(pending);
    assert.equal(tokenCalls(), 1);
    for (const res of results.slice(0, 8))
      assert.deepEqual(json(res), { hasAccess: true, balance: '1234', reason: null });
    assert.deepEqual(json(results[8]), { hasAccess: false, balance: '1234', reason: 'insufficientBalance' });
    assert.equal(json(results[9]).balance, '1234');
  });

  it('lets another instance see a gate edit within the lookup TTL (5 s)', async () => {
    const b = await buildTestApp({ shareWith: t, env: { SOLANA_RPC_URL: rpc.url } });
    try {
      // B's gate cache serves from memory only once its invalidation channel listens.
      await cachesServing(b);
      const gate = await createGate({ mintAddress: mint, minHoldings: '0' });
      const wallet = rpc.addWallet();
      const url = `/identity/organizations/${org.slug}/token-gates/${gate}/check?walletAddress=${wallet}`;
      assert.equal(json(await b.app.inject(url)).hasAccess, true);
      await sql`update token_gates set enabled = false where id = ${gate}`.execute(t.ctx.db);
      assert.equal(json(await b.app.inject(url)).hasAccess, true, 'still the cached gate');
      t.clock.advance(5);
      assert.equal(json(await b.app.inject(url)).reason, 'gateDisabled');
    } finally {
      await b.close();
    }
  });
});

describe('check body serialisation', () => {
  it('writes exactly JSON.stringify of the result for every shape', () => {
    const shapes: CheckResult[] = [
      { hasAccess: true, balance: '18446744073709551615', reason: null },
      { hasAccess: true, balance: '0', reason: null },
      { hasAccess: false, balance: '7', reason: 'insufficientBalance' },
      { hasAccess: false, balance: null, reason: 'gateDisabled' },
      { hasAccess: false, balance: null, reason: 'walletNotFound' },
    ];
    for (const r of shapes) assert.equal(serializeCheckResult(r), JSON.stringify(r));
  });
});
