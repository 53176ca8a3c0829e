import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { WRAPPED_SOL_MINT } from '../../src/solana/metadata.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from './fake-rpc.js';

describe('token gate kinds: token, collection, sol', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;

  async function createGate(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/token-gates`,
      headers: owner.auth,
      payload: { name: 'Holders', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  async function check(gateId: string, wallet: string, refresh = false) {
    const q = new URLSearchParams({ walletAddress: wallet, ...(refresh ? { refresh: 'true' } : {}) });
    const res = await t.app.inject(`/identity/organizations/${org.slug}/token-gates/${gateId}/check?${q}`);
    assert.equal(res.statusCode, 200, res.body);
    return json(res);
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    rpc.addWrappedSolMint();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });
  beforeEach(() => rpc.resetCalls());

  it('defaults kind to token and shows it; PATCH refuses kind with 400 validation_failed', async () => {
    const gate = await createGate({ mintAddress: rpc.addMint(), minHoldings: '1' });
    assert.equal(gate.kind, 'token');
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/identity/organizations/${org.slug}/token-gates/${gate.id}`,
      headers: owner.auth,
      payload: { kind: 'sol' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.code, 'validation_failed');
    const got = await t.app.inject({
      url: `/identity/organizations/${org.slug}/token-gates/${gate.id}`,
      headers: owner.auth,
    });
    assert.equal(json(got).kind, 'token');
  });

  it('refuses an unknown kind, and a sol gate on any mint but wrapped SOL', async () => {
    for (const body of [
      { kind: 'nft', mintAddress: rpc.addMint(), minHoldings: '1' },
      { kind: 'sol', mintAddress: rpc.addMint(), minHoldings: '1' },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org.slug}/token-gates`,
        headers: owner.auth,
        payload: { name: 'x', ...body },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).error.code, 'validation_failed');
    }
  });

  it('token kind counts both token programs (the mint filter)', async () => {
    const mint2022 = rpc.addMint('spl-token-2022');
    const gate = await createGate({ kind: 'token', mintAddress: mint2022, minHoldings: '10' });
    const wallet = rpc.addWallet();
    rpc.addTokenAccount(wallet, mint2022, '12');
    assert.deepEqual(await check(gate.id as string, wallet), {
      hasAccess: true,
      balance: '12',
      reason: null,
    });
  });

  it('sol kind adds native lamports and wrapped-SOL token amounts', async () => {
    const gate = await createGate({ kind: 'sol', mintAddress: WRAPPED_SOL_MINT, minHoldings: '3000000' });
    assert.equal(gate.kind, 'sol');
    const rich = rpc.addWallet(randomAddress(), 2_000_000);
    rpc.addTokenAccount(rich, WRAPPED_SOL_MINT, '1500000');
    assert.deepEqual(await check(gate.id as string, rich), {
      hasAccess: true,
      balance: '3500000',
      reason: null,
    });
    const poor = rpc.addWallet(randomAddress(), 2_000_000);
    assert.deepEqual(await check(gate.id as string, poor), {
      hasAccess: false,
      balance: '2000000',
      reason: 'insufficientBalance',
    });
    assert.deepEqual(await check(gate.id as string, randomAddress()), {
      hasAccess: false,
      balance: null,
      reason: 'walletNotFound',
    });
  });

  it('collection kind counts verified NFTs of the collection from metadata accounts (no DAS)', async () => {
    rpc.das = false;
    const collection = rpc.addMint('spl-token', 0);
    const other = rpc.addMint('spl-token', 0);
    const gate = await createGate({ kind: 'collection', mintAddress: collection, minHoldings: '2' });
    const wallet = rpc.addWallet();
    await rpc.addNft(wallet, collection, true);
    await rpc.addNft(wallet, collection, false); // unverified: not counted
    await rpc.addNft(wallet, other, true); // another collection
    await rpc.addNft(wallet, null); // no collection
    rpc.addTokenAccount(wallet, rpc.addMint('spl-token', 6), '1'); // 1 raw unit of a fungible: not an NFT
    assert.deepEqual(await check(gate.id as string, wallet), {
      hasAccess: false,
      balance: '1',
      reason: 'insufficientBalance',
    });
    assert.equal(rpc.calls.get('getTokenAccountsByOwner'), 1);
    assert.equal(rpc.calls.get('getMultipleAccounts'), 1);
    await rpc.addNft(wallet, collection, true);
    assert.deepEqual(await check(gate.id as string, wallet, true), {
      hasAccess: true,
      balance: '2',
      reason: null,
    });
    assert.deepEqual(await check(gate.id as string, randomAddress()), {
      hasAccess: false,
      balance: null,
      reason: 'walletNotFound',
    });
  });

  it('collection kind without DAS: metadata read 4 calls at a time, and at most 5,000 NFTs a check (502 past it)', async () => {
    rpc.das = false;
    rpc.latencyMs = 20;
    try {
      const collection = rpc.addMint('spl-token', 0);
      const gate = await createGate({ kind: 'collection', mintAddress: collection, minHoldings: '1' });
      const wallet = rpc.addWallet();
      for (let i = 0; i < 950; i++) await rpc.addNft(wallet, i === 949 ? collection : null);
      rpc.calls.clear();
      rpc.mostInFlight.clear();
      assert.deepEqual(await check(gate.id as string, wallet), {
        hasAccess: true,
        balance: '1',
        reason: null,
      });
      assert.equal(rpc.calls.get('getMultipleAccounts'), 10);
      assert.equal(rpc.mostInFlight.get('getMultipleAccounts'), 4);

      // Spam of one mint in many token accounts counts once: it cannot push a wallet past the bound.
      const spammed = rpc.addWallet();
      const spam = rpc.addMint('spl-token', 0);
      for (let i = 0; i < 5001; i++) rpc.addTokenAccount(spammed, spam, 1n);
      await rpc.addNft(spammed, collection);
      assert.deepEqual(await check(gate.id as string, spammed), {
        hasAccess: true,
        balance: '1',
        reason: null,
      });

      const whale = rpc.addWallet();
      for (let i = 0; i < 5001; i++) rpc.addTokenAccount(whale, rpc.addMint('spl-token', 0), 1n);
      rpc.calls.clear();
      const res = await t.app.inject(
        `/identity/organizations/${org.slug}/token-gates/${gate.id}/check?walletAddress=${whale}`,
      );
      assert.equal(res.statusCode, 502, res.body);
      assert.equal(rpc.calls.get('getMultipleAccounts'), undefined, 'nothing read past the bound');
    } finally {
      rpc.latencyMs = 0;
    }
  });

  it('collection kind uses DAS getAssetsByOwner when the node offers it', async () => {
    const rpc2 = await new FakeSolanaRpc().start();
    rpc2.das = true;
    const t2 = await buildTestApp({ env: { SOLANA_RPC_URL: rpc2.url } });
    try {
      const user = await createUser(t2);
      const org2 = await seedOrg(t2, user);
      const collection = rpc2.addMint('spl-token', 0);
      const created = await t2.app.inject({
        method: 'POST',
        url: `/identity/organizations/${org2.slug}/token-gates`,
        headers: user.auth,
        payload: { name: 'NFT', kind: 'collection', mintAddress: collection, minHoldings: '2' },
      });
      const wallet = rpc2.addWallet();
      await rpc2.addNft(wallet, collection, true);
      await rpc2.addNft(wallet, collection, true);
      await rpc2.addNft(wallet, collection, false);
      const res = await t2.app.inject(
        `/identity/organizations/${org2.slug}/token-gates/${json(created).id}/check?walletAddress=${wallet}`,
      );
      assert.deepEqual(json(res), { hasAccess: true, balance: '2', reason: null });
      assert.equal(rpc2.calls.get('getAssetsByOwner'), 1);
      assert.equal(rpc2.calls.get('getMultipleAccounts'), undefined);
      assert.equal(rpc2.calls.get('getTokenAccountsByOwner'), undefined);
    } finally {
      await t2.close();
      await rpc2.stop();
    }
  });
});
