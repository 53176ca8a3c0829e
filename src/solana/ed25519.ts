import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { BoundedCache } from '../lib/bounded-cache.js';

/** DER prefix of an SPKI Ed25519 public key (RFC 8410); the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Parsed public keys of recent wallets, each checked once by isProvingPublicKey. Importing a key
 * (`createPublicKey`) costs more than the signature check itself; a wallet that signs in again reuses
 * its key object. A public key is public and its parse never changes, so nothing here can go stale:
 * the bound only caps memory.
 */
const keys = new BoundedCache<KeyObject>(10_000);

/**
 * Whether a wallet's public key can prove anything: its canonical encoding (y < p, no "negative
 * zero") of a point of the curve outside the small-order subgroup (RFC 8032 §5.1.3 decoding, checked
 * with @noble/curves). OpenSSL's Ed25519 verify accepts small-order keys, and for those a signature
 * made with no private key verifies: for the identity point (the address
 * `4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM`), R = the identity and S = 0 verify for every
 * message; for `11111111111111111111111111111111` one of the eight small-order R does for most. No
 * one holds such a wallet, so none may sign in or be linked. (Token gates still read any address:
 * program-derived addresses are off the curve and hold tokens.)
 */
export function isProvingPublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32) return false;
  try {
    return !ed25519.Point.fromBytes(publicKey, false).isSmallOrder();
  } catch {
    return false;
  }
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey).toString('base64');
  let key = keys.get(id, 0);
  if (!key) {
    if (!isProvingPublicKey(publicKey)) throw new Error('not a public key that can prove anything');
    key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKey)]),
      format: 'der',
      type: 'spki',
    });
    keys.set(id, key, Number.POSITIVE_INFINITY);
  }
  return key;
}

/**
 * Verifies an Ed25519 signature with node:crypto on the libuv pool: a check costs ~100 µs of CPU
 * here, the event loop's share of it ~4 µs. `publicKey` is the raw 32-byte key (a decoded Solana
 * address); a key that cannot prove anything (isProvingPublicKey) verifies nothing. Any malformed
 * input verifies as false rather than throwing.
 */
export function verifyEd25519(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      verify(null, message, publicKeyObject(publicKey), signature, (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}
