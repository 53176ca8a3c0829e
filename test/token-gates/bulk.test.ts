import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { WRAPPED_SOL_MINT } from '../../src/solana/metadata.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from './fake-rpc.js';

describe('bulk token gate check', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;
  let tokenGate: string;
  let token2022Gate: string;
  let solGate: string;
  let collectionGate: string;
  let otherGate: string;
  let mint: string;
  let mint2022: string;
  let collection: string;

  async function gate(o: TestOrg, body: Record<string, unknown>): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${o.slug}/token-gates`,
      headers: owner.auth,
      payload: { name: 'g', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id;
  }

  const bulk = (payload: unknown, o: TestOrg = org) =>
    t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${o.slug}/token-gates/check`,
      payload: payload as Record<string, unknown>,
    });

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    rpc.addWrappedSolMint();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    otherOrg = await seedOrg(t, owner);
    mint = rpc.addMint('spl-token');
    mint2022 = rpc.addMint('spl-token-2022');
    collection = rpc.addMint('spl-token', 0);
    tokenGate = await gate(org, { mintAddress: mint, minHoldings: '100' });
    token2022Gate = await gate(org, { mintAddress: mint2022, minHoldings: '1' });
    solGate = await gate(org, { kind: 'sol', mintAddress: WRAPPED_SOL_MINT, minHoldings: '1500000' });
    collectionGate = await gate(org, { kind: 'collection', mintAddress: collection, minHoldings: '1' });
    otherGate = await gate(otherOrg, { mintAddress: mint, minHoldings: '1' });
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });
  beforeEach(() => rpc.resetCalls());

  it('answers wallet-major in input order, duplicates kept, with batched RPC calls', async () => {
    const a = rpc.addWallet();
    rpc.addTokenAccount(a, mint, '150');
    rpc.addTokenAccount(a, WRAPPED_SOL_MINT, '600000');
    await rpc.addNft(a, collection, true);
    const b = rpc.addWallet();
    rpc.addTokenAccount(b, mint2022, '5');
    await rpc.addNft(b, collection, false);
    const ghost = randomAddress();
    const gates = [tokenGate, token2022Gate, solGate, collectionGate, tokenGate];
    const res = await bulk({ walletAddresses: [a, b, ghost, a], gateIds: gates });
    assert.equal(res.statusCode, 200, res.body);
    const results = json(res).results;
    assert.equal(results.length, 20);
    const row = (
      w: string,
      g: string,
      hasAccess: boolean,
      balance: string | null,
      reason: string | null,
    ) => ({
      walletAddress: w,
      gateId: g,
      hasAccess,
      balance,
      reason,
    });
    const forA = [
      row(a, tokenGate, true, '150', null),
      row(a, token2022Gate, false, '0', 'insufficientBalance'),
      row(a, solGate, true, '1600000', null),
      row(a, collectionGate, true, '1', null),
      row(a, tokenGate, true, '150', null),
    ];
    const miss = (g: string) => row(ghost, g, false, null, 'walletNotFound');
    assert.deepEqual(results, [
      ...forA,
      row(b, tokenGate, false, '0', 'insufficientBalance'),
      row(b, token2022Gate, true, '5', null),
      row(b, solGate, false, '1000000', 'insufficientBalance'),
      row(b, collectionGate, false, '0', 'insufficientBalance'),
      row(b, tokenGate, false, '0', 'insufficientBalance'),
      ...gates.map(miss),
      ...forA,
    ]);
    // 3 distinct wallets: one call per wallet and token program, one getMultipleAccounts for the
    // wallets and one for the metadata of their NFTs; never wallets × gates.
    assert.equal(rpc.calls.get('getTokenAccountsByOwner'), 6);
    assert.equal(rpc.calls.get('getMultipleAccounts'), 2);
    assert.equal(rpc.calls.get('getAccountInfo'), undefined);
    // The single check shares the cache the bulk check filled.
    rpc.resetCalls();
    const single = await t.app.inject(
      `/identity/organizations/${org.slug}/token-gates/${tokenGate}/check?walletAddress=${a}`,
    );
    assert.deepEqual(json(single), { hasAccess: true, balance: '150', reason: null });
    assert.equal(rpc.totalCalls, 0);
    const again = await bulk({ walletAddresses: [a, b], gateIds: [solGate] });
    assert.equal(again.statusCode, 200);
    assert.equal(rpc.totalCalls, 0);
  });

  it('reads 100 wallets with getMultipleAccounts per 100 accounts', async () => {
    const wallets = Array.from({ length: 100 }, () => rpc.addWallet());
    for (const w of wallets.slice(0, 60)) await rpc.addNft(w, collection, true);
    for (const w of wallets.slice(0, 60)) await rpc.addNft(w, collection, true);
    const res = await bulk({ walletAddresses: wallets, gateIds: [collectionGate, tokenGate] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).results[0].balance, '2');
    assert.equal(json(res).results[199].balance, '0');
    assert.equal(rpc.calls.get('getTokenAccountsByOwner'), 200);
    // 1 for the wallets + 120 metadata accounts in 2.
    assert.equal(rpc.calls.get('getMultipleAccounts'), 3);
  });

  it('refuses bad input with 400, an unknown or other org gate with 404', async () => {
    const w = rpc.addWallet();
    for (const body of [
      { walletAddresses: [], gateIds: [tokenGate] },
      { walletAddresses: [w], gateIds: [] },
      { walletAddresses: Array.from({ length: 101 }, () => w), gateIds: [tokenGate] },
      { walletAddresses: [w], gateIds: Array.from({ length: 21 }, () => tokenGate) },
      { walletAddresses: ['0OIl'], gateIds: [tokenGate] },
      { walletAddresses: [w] },
    ]) {
      const res = await bulk(body);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).error.code, 'validation_failed');
    }
    assert.equal((await bulk({ walletAddresses: [w], gateIds: [otherGate] })).statusCode, 404);
    assert.equal((await bulk({ walletAddresses: [w], gateIds: ['gate_nope'] })).statusCode, 404);
  });

  it('spends wallets × gates of the per-IP budget of 6,000 a minute', async () => {
    const wallets = Array.from({ length: 100 }, () => randomAddress());
    const gates = Array.from({ length: 20 }, () => tokenGate);
    const first = await bulk({ walletAddresses: wallets.slice(0, 1), gateIds: [tokenGate] });
    const start = Number(first.headers['ratelimit-remaining']);
    assert.equal(Number(first.headers['ratelimit-limit']), 6000);
    const full = await bulk({ walletAddresses: wallets, gateIds: gates });
    assert.equal(full.statusCode, 200);
    assert.equal(
      Number(full.headers['ratelimit-remaining']),
      start - 2000,
      'a request costs wallets × gates',
    );
    let left = start - 2000;
    while (left >= 2000) {
      assert.equal((await bulk({ walletAddresses: wallets, gateIds: gates })).statusCode, 200);
      left -= 2000;
    }
    const refused = await bulk({ walletAddresses: wallets, gateIds: gates });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.ok(refused.headers['retry-after']);
  });
});
