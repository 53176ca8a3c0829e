import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import { isProvingPublicKey, verifyEd25519 } from '../../src/solana/ed25519.js';

function wallet() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { raw: new Uint8Array(raw), sign: (m: Buffer) => new Uint8Array(sign(null, m, privateKey)) };
}

describe('verifyEd25519 (the wallet signature check on the libuv pool, with its key objects kept per wallet)', () => {
  it('accepts the wallet own signature, again from the kept key, and nothing else', async () => {
    const a = wallet();
    const b = wallet();
    const message = Buffer.from('sign in to gatehouse.test');
    const sig = a.sign(message);
    assert.equal(await verifyEd25519(a.raw, message, sig), true);
    assert.equal(await verifyEd25519(a.raw, message, sig), true, 'the second check uses the kept key object');
    assert.equal(await verifyEd25519(b.raw, message, sig), false, 'another wallet');
    assert.equal(
      await verifyEd25519(a.raw, Buffer.from('sign in to evil.test'), sig),
      false,
      'another message',
    );
    const flipped = Uint8Array.from(sig);
    flipped[0] ^= 1;
    assert.equal(await verifyEd25519(a.raw, message, flipped), false, 'a changed signature');
    // b's key is kept now too; a's signature still fails under it, b's own passes.
    assert.equal(await verifyEd25519(b.raw, message, b.sign(message)), true);
  });

  it('answers false, never rejects, on malformed keys and signatures', async () => {
    const a = wallet();
    const message = Buffer.from('m');
    assert.equal(await verifyEd25519(a.raw.subarray(1), message, a.sign(message)), false);
    assert.equal(await verifyEd25519(a.raw, message, a.sign(message).subarray(1)), false);
    assert.equal(await verifyEd25519(new Uint8Array(32).fill(0xff), message, new Uint8Array(64)), false);
  });

  it('refuses keys that prove nothing: small-order points and non-canonical encodings', async () => {
    const message = Buffer.from('sign in to gatehouse.test');
    // R = the identity point, S = 0: verifies under the identity key for every message.
    const forged = new Uint8Array(64);
    forged[0] = 1;
    const identity = bs58.decode('4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM');
    assert.equal(await verifyEd25519(identity, message, forged), false);
    const smallOrderOrOddlyWritten = [
      '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM', // the identity (order 1)
      'H5xSWNRAbqKddKjrabehyU8drL3Dk4LgZJiEJc9rGGyC', // the identity written as y = p + 1
      '11111111111111111111111111111111', // y = 0: order 4 (the System Program's id)
      'Gx9dDNxzpALCowVuZb7pBceBLJugLA8sPa6TJDXrpfeW', // y = p - 1 = -1: order 2
    ].map((a) => bs58.decode(a));
    for (const key of smallOrderOrOddlyWritten)
      assert.equal(isProvingPublicKey(key), false, bs58.encode(key));
    assert.equal(isProvingPublicKey(wallet().raw), true);
  });

  it('checks on the libuv pool: many checks at once each get their own answer', async () => {
    const a = wallet();
    const messages = Array.from({ length: 64 }, (_, i) => Buffer.from(`message ${i}`));
    const sigs = messages.map((m) => a.sign(m));
    // Every other signature belongs to another message: answers must not cross between checks.
    const answers = await Promise.all(
      messages.map((m, i) => verifyEd25519(a.raw, m, sigs[i % 2 === 0 ? i : (i + 1) % 64])),
    );
    assert.deepEqual(
      answers,
      messages.map((_, i) => i % 2 === 0),
    );
  });
});
