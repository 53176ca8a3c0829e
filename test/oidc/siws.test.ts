import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError } from '../../src/http/errors.js';
import { sha256 } from '../../src/lib/hash.js';
import {
  createWalletChallenge,
  redeemSignInProof,
  verifyWalletProof,
} from '../../src/oidc/signin/wallet-challenges.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;
let a: SeededClient;
let b: SeededClient;

const brandOf = (c: SeededClient) => ({ id: c.brandId, slug: c.brandSlug, name: c.brandName });

type Proof = { address: string; signature: string; signedMessage: string };

/** The two redemptions: step by step (link, and any proof that fails), and sign-in's one statement. */
const REDEMPTIONS = {
  'step by step': (proof: Proof, brandId: string, purpose: 'signin' | 'link') =>
    t.ctx.db.transaction().execute((trx) => verifyWalletProof(t.ctx, trx, { ...proof, brandId, purpose })),
  'sign-in (one statement)': (proof: Proof, brandId: string, purpose: 'signin' | 'link') =>
    t.ctx.stores.signin.atomic((tx) => redeemSignInProof(tx, t.clock, { ...proof, brandId, purpose })),
};
async function rejects(p: Promise<unknown>, code: string, status = 400) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.status, status);
    return true;
  });
}

before(async () => {
  t = await buildTestApp();
  a = await seedClient(t, { brand: { name: 'Acme Wallet' } });
  b = await seedClient(t);
});
after(() => t.close());

describe('SIWS challenges', () => {
  it('builds the exact DESIGN.md message with a 5-minute expiry and stores only hashes', async () => {
    const w = createTestWallet();
    const c = await createWalletChallenge(t.ctx, {
      address: w.address,
      brand: brandOf(a),
      purpose: 'signin',
    });
    assert.match(c.nonce, /^[A-Za-z0-9]{16,}$/);
    const issued = t.clock.now().toISOString();
    const expires = new Date(t.clock.nowMs() + 300_000).toISOString();
    assert.equal(
      c.message,
      [
        'gatehouse.test wants you to sign in with your Solana account:',
        w.address,
        '',
        'Sign in to Acme Wallet',
        '',
        'URI: http://gatehouse.test',
        'Version: 1',
        'Chain ID: mainnet',
        `Nonce: ${c.nonce}`,
        `Issued At: ${issued}`,
        `Expiration Time: ${expires}`,
        'Resources:',
        `- brand:${a.brandSlug}`,
      ].join('\n'),
    );
    assert.equal(c.expiresAt.toISOString(), expires);
    const row = await t.ctx.db
      .selectFrom('wallet_challenges')
      .selectAll()
      .where('message_hash', '=', sha256(c.message))
      .executeTakeFirstOrThrow();
    assert.equal(row.nonce_hash, sha256(c.nonce));
    assert.equal(row.brand_id, a.brandId);
    assert.equal(row.address, w.address);
    assert.equal(row.purpose, 'signin');
    assert.equal(row.consumed_at, null);
    assert.ok(!JSON.stringify(row).includes(c.nonce), 'the nonce itself is not stored');
  });

  it('uses the link statement for purpose link', async () => {
    const w = createTestWallet();
    const c = await createWalletChallenge(t.ctx, { address: w.address, brand: brandOf(a), purpose: 'link' });
    assert.equal(c.message.split('\n')[3], 'Link this wallet to your account on Acme Wallet');
  });

  it('keeps the statement on one line when the brand name holds line breaks', async () => {
    const w = createTestWallet();
    const c = await createWalletChallenge(t.ctx, {
      address: w.address,
      brand: { ...brandOf(a), name: 'Evil\r\nURI: https://evil.example\n\u2028Resources:\n- brand:other' },
      purpose: 'signin',
    });
    const lines = c.message.split(/\r\n|\r|\n|\u2028|\u2029/);
    assert.equal(lines.length, 13, c.message);
    assert.equal(lines[3], 'Sign in to Evil URI: https://evil.example Resources: - brand:other');
    assert.deepEqual(
      lines.filter((l) => l.startsWith('URI: ') || l === 'Resources:'),
      ['URI: http://gatehouse.test', 'Resources:'],
    );
    assert.equal(lines[12], `- brand:${a.brandSlug}`);
  });

  it('refuses an address that is not base58 or not 32 bytes with validation_failed', async () => {
    for (const address of ['not-base58-0OIl', '11111111111111111111111111111111111', 'abc']) {
      await rejects(
        createWalletChallenge(t.ctx, { address, brand: brandOf(a), purpose: 'signin' }),
        'validation_failed',
      );
    }
  });
});

for (const [name, redemption] of Object.entries(REDEMPTIONS))
  describe(`SIWS verification: ${name}`, () => {
    const verify = (proof: Proof, brandId: string, purpose: 'signin' | 'link' = 'signin') =>
      redemption(proof, brandId, purpose);

    it('accepts a real Ed25519 signature once, then answers replayed_nonce', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      const proof = w.prove(c.message);
      assert.equal((await verify(proof, a.brandId)).address, w.address);
      await rejects(verify(proof, a.brandId), 'replayed_nonce');
    });

    it('answers bad_signature for a message the service never issued', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      await rejects(verify(w.prove(`${c.message} `), a.brandId), 'bad_signature');
    });

    it('answers bad_signature for a signature made by another key', async () => {
      const w = createTestWallet();
      const other = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      const forged = { ...w.prove(c.message), signature: other.signBytes(c.message).toString('base64') };
      await rejects(verify(forged, a.brandId), 'bad_signature');
    });

    it('answers bad_signature for a small-order address, whose "signature" needs no private key', async () => {
      // The identity point, canonical and not: R = the identity, S = 0 satisfies the verification
      // equation for every message, and OpenSSL's verify accepts it.
      const forged = Buffer.alloc(64);
      forged[0] = 1;
      for (const address of [
        '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM',
        'H5xSWNRAbqKddKjrabehyU8drL3Dk4LgZJiEJc9rGGyC',
      ]) {
        const c = await createWalletChallenge(t.ctx, { address, brand: brandOf(a), purpose: 'signin' });
        const proof = {
          address,
          signedMessage: Buffer.from(c.message).toString('base64'),
          signature: forged.toString('base64'),
        };
        await rejects(verify(proof, a.brandId), 'bad_signature');
      }
    });

    it('answers bad_signature when the body address differs from the message address', async () => {
      const w = createTestWallet();
      const other = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      await rejects(verify({ ...w.prove(c.message), address: other.address }, a.brandId), 'bad_signature');
    });

    it('answers bad_signature when another wallet signs the message as its own', async () => {
      const w = createTestWallet();
      const other = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      // A valid signature, for the other wallet's address: not the address the challenge was issued to.
      await rejects(verify(other.prove(c.message), a.brandId), 'bad_signature');
    });

    it('answers wrong_brand (400) for a challenge of another brand, before consuming it', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(b),
        purpose: 'signin',
      });
      const proof = w.prove(c.message);
      await rejects(verify(proof, a.brandId), 'wrong_brand');
      assert.equal((await verify(proof, b.brandId)).address, w.address);
    });

    it('answers bad_signature for a link challenge presented as sign-in', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'link',
      });
      await rejects(verify(w.prove(c.message), a.brandId, 'signin'), 'bad_signature');
    });

    it('answers stale_challenge after 5 minutes (clock +301 s)', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      t.clock.advance(301);
      await rejects(verify(w.prove(c.message), a.brandId), 'stale_challenge');
    });

    it('still accepts a challenge at 299 s', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      t.clock.advance(299);
      assert.equal((await verify(w.prove(c.message), a.brandId)).address, w.address);
    });

    it('refuses malformed base64 or a short signature with validation_failed', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      const proof = w.prove(c.message);
      await rejects(verify({ ...proof, signature: 'not base64!' }, a.brandId), 'validation_failed');
      await rejects(
        verify({ ...proof, signature: Buffer.alloc(10).toString('base64') }, a.brandId),
        'validation_failed',
      );
      await rejects(verify({ ...proof, address: 'bad' }, a.brandId), 'validation_failed');
    });

    it('lets exactly one of several concurrent redemptions of one challenge succeed', async () => {
      const w = createTestWallet();
      const c = await createWalletChallenge(t.ctx, {
        address: w.address,
        brand: brandOf(a),
        purpose: 'signin',
      });
      const proof = w.prove(c.message);
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => verify(proof, a.brandId)));
      const ok = results.filter((r) => r.status === 'fulfilled');
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(ok.length, 1);
      assert.equal(failed.length, 3);
      for (const f of failed) assert.equal((f.reason as ApiError).code, 'replayed_nonce');
    });
  });
