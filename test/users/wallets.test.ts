import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { createWalletChallenge } from '../../src/oidc/signin/wallet-challenges.js';
import { type TestApp, type TestUser, buildTestApp, consoleToken, createUser, json } from '../helpers/app.js';
import { seedClient } from '../helpers/signin.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

/** A user whose console token is minted now (auth_time now), so force is allowed by default. */
async function freshUser(): Promise<TestUser> {
  return createUser(t);
}

async function challenge(user: TestUser, address: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/wallet-challenge',
    headers: user.auth,
    payload: { address },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).message;
}

function link(user: TestUser, body: Record<string, unknown>, headers = user.auth) {
  return t.app.inject({
    method: 'POST',
    url: '/users/me/public-keys',
    headers,
    payload: { blockchain: 'solana', ...body },
  });
}

async function linkWallet(user: TestUser, wallet: TestWallet, extra: Record<string, unknown> = {}) {
  const message = await challenge(user, wallet.address);
  const res = await link(user, { ...wallet.prove(message), ...extra });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

function expectError(res: { statusCode: number; body: string }, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(json(res).error.code, code);
}

describe('POST /users/me/wallet-challenge', () => {
  it('issues a 5-minute "Link this wallet" SIWS message for the console brand, stored without its nonce', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const res = await t.app.inject({
      method: 'POST',
      url: '/users/me/wallet-challenge',
      headers: user.auth,
      payload: { address: wallet.address },
    });
    assert.equal(res.statusCode, 200);
    const { message, expiresAt } = json(res);
    assert.equal(expiresAt, new Date(t.clock.nowMs() + 300_000).toISOString());
    const lines = message.split('\n');
    assert.equal(lines[0], 'gatehouse.test wants you to sign in with your Solana account:');
    assert.equal(lines[1], wallet.address);
    assert.equal(lines[3], 'Link this wallet to your account on Gatehouse Console');
    assert.equal(lines.at(-1), '- brand:console');
    const nonce = /^Nonce: (\w+)$/m.exec(message)![1];
    assert.ok(nonce.length >= 16);
    const rows = await t.ctx.db.selectFrom('wallet_challenges').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(nonce), 'no stored row holds the nonce');
    assert.ok(!dump.includes(message));
  });

  it('answers 400 validation_failed for an address that is not base58 or not 32 bytes', async () => {
    const user = await freshUser();
    for (const address of [
      '0OIl-not-base58',
      bs58.encode(Buffer.alloc(31, 1)),
      bs58.encode(Buffer.alloc(33, 1)),
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/users/me/wallet-challenge',
        headers: user.auth,
        payload: { address },
      });
      expectError(res, 400, 'validation_failed');
    }
  });
});

describe('POST /users/me/public-keys', () => {
  it('links a wallet with a proof: first is primary, the second is not; activity records it', async () => {
    const user = await freshUser();
    const w1 = createTestWallet();
    const w2 = createTestWallet();
    const first = await linkWallet(user, w1, { label: 'Phantom' });
    assert.deepEqual(Object.keys(first).sort(), ['address', 'blockchain', 'id', 'isPrimary', 'label']);
    assert.equal(first.address, w1.address);
    assert.equal(first.blockchain, 'solana');
    assert.equal(first.isPrimary, true);
    assert.equal(first.label, 'Phantom');
    const second = await linkWallet(user, w2);
    assert.equal(second.isPrimary, false);

    const list = json(
      await t.app.inject({ method: 'GET', url: '/users/me/public-keys', headers: user.auth }),
    );
    assert.deepEqual(
      list.map((k: { address: string }) => k.address),
      [w1.address, w2.address],
    );
    const me = json(await t.app.inject({ method: 'GET', url: '/users/me', headers: user.auth }));
    assert.equal(me.userPublicKeys.length, 2);
    const providers = json(
      await t.app.inject({ method: 'GET', url: '/users/me/authentication-providers', headers: user.auth }),
    );
    assert.deepEqual(
      providers.map((p: { type: string; address: string }) => [p.type, p.address]),
      [
        ['publicKey', w1.address],
        ['publicKey', w2.address],
      ],
    );
    const activity = json(
      await t.app.inject({ method: 'GET', url: '/users/me/activity', headers: user.auth }),
    );
    assert.deepEqual(
      activity.items.map((a: { type: string; provider: string }) => [a.type, a.provider]),
      [
        ['link_provider', 'solana'],
        ['link_provider', 'solana'],
      ],
    );
  });

  it('answers bad_signature for a signature by another key', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(user, wallet.address);
    const forged = createTestWallet().prove(message);
    expectError(await link(user, { ...forged, address: wallet.address }), 400, 'bad_signature');
  });

  it('answers bad_signature for a message the service did not issue', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(user, wallet.address);
    const tampered = message.replace('Version: 1', 'Version: 2');
    expectError(await link(user, wallet.prove(tampered)), 400, 'bad_signature');
  });

  it("answers bad_signature when the body's address differs from the message's", async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const other = createTestWallet();
    const message = await challenge(user, wallet.address);
    expectError(await link(user, { ...wallet.prove(message), address: other.address }), 400, 'bad_signature');
  });

  it('answers bad_signature for a challenge another user asked for', async () => {
    const alice = await freshUser();
    const bob = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(bob, wallet.address);
    expectError(await link(alice, wallet.prove(message)), 400, 'bad_signature');
  });

  it('answers stale_challenge after 5 minutes', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(user, wallet.address);
    t.clock.advance(300);
    expectError(await link(user, wallet.prove(message)), 400, 'stale_challenge');
  });

  it('answers replayed_nonce for a second redemption', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(user, wallet.address);
    assert.equal((await link(user, wallet.prove(message))).statusCode, 201);
    expectError(await link(user, wallet.prove(message)), 400, 'replayed_nonce');
  });

  it('answers wrong_brand for a challenge issued for another brand', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const client = await seedClient(t);
    const { message } = await createWalletChallenge(t.ctx, {
      address: wallet.address,
      brand: { id: client.brandId, slug: client.brandSlug, name: client.brandName },
      purpose: 'link',
      userId: user.id,
    });
    expectError(await link(user, wallet.prove(message)), 400, 'wrong_brand');
  });

  it('redeems one challenge once under concurrent requests', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const proof = wallet.prove(await challenge(user, wallet.address));
    const results = await Promise.all(Array.from({ length: 5 }, () => link(user, proof)));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.statusCode === 400))
      assert.equal(json(r).error.code, 'replayed_nonce');
    const rows = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(rows.length, 1);
  });

  it('answers 400 validation_failed for an invalid address, signature or body', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const proof = wallet.prove(await challenge(user, wallet.address));
    expectError(await link(user, { ...proof, address: 'not-base58-0OIl' }), 400, 'validation_failed');
    expectError(
      await link(user, { ...proof, address: bs58.encode(Buffer.alloc(31, 2)) }),
      400,
      'validation_failed',
    );
    expectError(await link(user, { ...proof, signature: '***' }), 400, 'validation_failed');
    expectError(await link(user, { ...proof, blockchain: 'ethereum' }), 400, 'validation_failed');
    const { signature: _s, ...noSignature } = proof;
    expectError(await link(user, noSignature), 400, 'validation_failed');
    // None of these burned the challenge.
    assert.equal((await link(user, proof)).statusCode, 201);
  });

  it('answers 409 wallet_in_use for a wallet of another account; force moves it with a recent sign-in', async () => {
    const bob = await freshUser();
    const alice = await freshUser();
    const wallet = createTestWallet();
    const keep = createTestWallet();
    await linkWallet(bob, wallet);
    await linkWallet(bob, keep);
    const proof = wallet.prove(await challenge(alice, wallet.address));
    expectError(await link(alice, proof), 409, 'wallet_in_use');

    // An old sign-in is not enough to take a wallet from another account.
    const stale = await consoleToken(t, alice.id, { auth_time: t.clock.nowSec() - 601 });
    const refused = await link(alice, { ...proof, force: true }, { authorization: `Bearer ${stale}` });
    expectError(refused, 403, 'forbidden');
    assert.deepEqual(json(refused).error.details.missing, ['recent_sign_in']);

    // The same signed challenge (not burned by the refusals) with force and a fresh sign-in.
    const moved = await link(alice, { ...proof, force: true });
    assert.equal(moved.statusCode, 201, moved.body);
    assert.equal(json(moved).isPrimary, true);
    const owners = await t.ctx.db
      .selectFrom('user_public_keys')
      .select(['user_id', 'address', 'is_primary'])
      .where('address', 'in', [wallet.address, keep.address])
      .orderBy('address')
      .execute();
    const byAddress = Object.fromEntries(owners.map((o) => [o.address, o]));
    assert.equal(byAddress[wallet.address].user_id, alice.id);
    assert.equal(byAddress[keep.address].user_id, bob.id);
    assert.equal(byAddress[keep.address].is_primary, true, "bob's remaining wallet became primary");
  });

  it('answers 409 conflict for a wallet already linked to the caller', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    await linkWallet(user, wallet);
    const res = await link(user, wallet.prove(await challenge(user, wallet.address)));
    expectError(res, 409, 'conflict');
  });

  it('is limited to 10 per minute per user and sends the RateLimit headers', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    const message = await challenge(user, wallet.address);
    const forged = { ...createTestWallet().prove(message), address: wallet.address };
    for (let i = 0; i < 10; i++) {
      const res = await link(user, forged);
      // The failed proof burns the challenge: later attempts replay it.
      expectError(res, 400, i === 0 ? 'bad_signature' : 'replayed_nonce');
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], String(9 - i));
    }
    expectError(await link(user, forged), 429, 'rate_limited');
  });

  it('requires authentication and users:write on an API key', async () => {
    const wallet = createTestWallet();
    const res = await t.app.inject({
      method: 'POST',
      url: '/users/me/public-keys',
      payload: { blockchain: 'solana', ...wallet.prove('x') },
    });
    expectError(res, 401, 'unauthorized');
    const user = await freshUser();
    const key = json(
      await t.app.inject({
        method: 'POST',
        url: '/users/me/api-keys',
        headers: user.auth,
        payload: { name: 'ro', scopes: ['users:read'] },
      }),
    ).key;
    const viaKey = await link(user, wallet.prove('x'), { authorization: `Bearer ${key}` });
    expectError(viaKey, 403, 'forbidden');
  });

  it('is refused for an API key of any scope: a new sign-in method is a full credential', async () => {
    const user = await freshUser();
    const wallet = createTestWallet();
    for (const scopes of [[], ['users:write']]) {
      const key = json(
        await t.app.inject({
          method: 'POST',
          url: '/users/me/api-keys',
          headers: user.auth,
          payload: { name: 'k', scopes },
        }),
      ).key;
      const keyAuth = { authorization: `Bearer ${key}` };
      const message = json(
        await t.app.inject({
          method: 'POST',
          url: '/users/me/wallet-challenge',
          headers: keyAuth,
          payload: { address: wallet.address },
        }),
      ).message;
      const viaKey = await link(user, wallet.prove(message), keyAuth);
      expectError(viaKey, 403, 'forbidden');
      assert.deepEqual(json(viaKey).error.details.missing, ['access_token']);
    }
    const keys = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('id')
      .where('address', '=', wallet.address)
      .execute();
    assert.equal(keys.length, 0, 'the wallet was not linked');
  });
});

describe('PATCH /users/me/public-keys/:id', () => {
  it('sets a label and moves the primary flag atomically', async () => {
    const user = await freshUser();
    const a = await linkWallet(user, createTestWallet());
    const b = await linkWallet(user, createTestWallet());
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/users/me/public-keys/${b.id}`,
      headers: user.auth,
      payload: { isPrimary: true, label: 'Ledger' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).isPrimary, true);
    assert.equal(json(res).label, 'Ledger');
    const list = json(
      await t.app.inject({ method: 'GET', url: '/users/me/public-keys', headers: user.auth }),
    );
    assert.deepEqual(
      list.map((k: { id: string; isPrimary: boolean }) => [k.id, k.isPrimary]),
      [
        [b.id, true],
        [a.id, false],
      ],
    );
    const cleared = await t.app.inject({
      method: 'PATCH',
      url: `/users/me/public-keys/${b.id}`,
      headers: user.auth,
      payload: { label: null },
    });
    assert.equal(json(cleared).label, undefined);
  });

  it("answers 404 for another user's wallet and 400 for an empty or invalid body", async () => {
    const owner = await freshUser();
    const other = await freshUser();
    const k = await linkWallet(owner, createTestWallet());
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/users/me/public-keys/${k.id}`,
      headers: other.auth,
      payload: { isPrimary: true },
    });
    expectError(res, 404, 'not_found');
    for (const payload of [
      {},
      { isPrimary: 'yes' },
      { label: '' },
      { label: 'x'.repeat(81) },
      { address: 'x' },
    ]) {
      const bad = await t.app.inject({
        method: 'PATCH',
        url: `/users/me/public-keys/${k.id}`,
        headers: owner.auth,
        payload,
      });
      expectError(bad, 400, 'validation_failed');
    }
  });
});

describe('DELETE /users/me/public-keys/:id', () => {
  const remove = (user: TestUser, id: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'DELETE', url: `/users/me/public-keys/${id}`, headers: user.auth, payload });

  it('removes a wallet with a fresh proof (204), passing primacy on, and records unlink_provider', async () => {
    const user = await freshUser();
    const w1 = createTestWallet();
    const w2 = createTestWallet();
    const k1 = await linkWallet(user, w1);
    const k2 = await linkWallet(user, w2);
    t.clock.advance(1);
    const { signature, signedMessage } = w1.prove(await challenge(user, w1.address));
    const res = await remove(user, k1.id, { signature, signedMessage });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const list = json(
      await t.app.inject({ method: 'GET', url: '/users/me/public-keys', headers: user.auth }),
    );
    assert.deepEqual(list, [{ id: k2.id, blockchain: 'solana', address: w2.address, isPrimary: true }]);
    const activity = json(
      await t.app.inject({ method: 'GET', url: '/users/me/activity', headers: user.auth }),
    );
    assert.equal(activity.items[0].type, 'unlink_provider');
  });

  it('refuses the last sign-in method with 422 and keeps the challenge usable', async () => {
    const user = await freshUser();
    const w = createTestWallet();
    const k = await linkWallet(user, w);
    const proof = w.prove(await challenge(user, w.address));
    const res = await remove(user, k.id, { signature: proof.signature, signedMessage: proof.signedMessage });
    expectError(res, 422, 'unprocessable_entity');
    const keys = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(keys.length, 1);
  });

  it("needs the wallet's own signature over a fresh challenge", async () => {
    const user = await freshUser();
    const w1 = createTestWallet();
    const w2 = createTestWallet();
    const k1 = await linkWallet(user, w1);
    await linkWallet(user, w2);
    // A proof by another wallet of the account does not remove this one.
    const otherProof = w2.prove(await challenge(user, w2.address));
    expectError(
      await remove(user, k1.id, { signature: otherProof.signature, signedMessage: otherProof.signedMessage }),
      400,
      'bad_signature',
    );
    const message = await challenge(user, w1.address);
    t.clock.advance(301);
    const late = w1.prove(message);
    expectError(
      await remove(user, k1.id, { signature: late.signature, signedMessage: late.signedMessage }),
      400,
      'stale_challenge',
    );
    expectError(await remove(user, k1.id, {}), 400, 'validation_failed');
  });

  it("answers 404 for another user's wallet", async () => {
    const owner = await freshUser();
    const other = await freshUser();
    const w = createTestWallet();
    const k = await linkWallet(owner, w);
    const proof = w.prove(await challenge(owner, w.address));
    expectError(
      await remove(other, k.id, { signature: proof.signature, signedMessage: proof.signedMessage }),
      404,
      'not_found',
    );
  });
});
