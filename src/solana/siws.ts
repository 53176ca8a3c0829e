import { ApiError, validationFailed } from '../http/errors.js';
import { safeEqual } from '../lib/hash.js';
import { decodeAddress, isSolanaAddress } from '../lib/solana.js';
import { verifyEd25519 } from './ed25519.js';

export type WalletPurpose = 'signin' | 'link';

export interface ChallengeBrand {
  id: string;
  slug: string;
  name: string;
}

export const badSignature = () => new ApiError(400, 'bad_signature', 'the signature does not verify');
export const wrongBrand = () =>
  new ApiError(
    400,
    'wrong_brand',
    'the challenge was issued for another brand than the one being signed in to',
  );
export const staleChallenge = () =>
  new ApiError(400, 'stale_challenge', 'the challenge is older than 5 minutes; request a new one');
export const replayedNonce = () =>
  new ApiError(400, 'replayed_nonce', 'the challenge has already been redeemed');

function invalidField(field: string, message: string): ApiError {
  return validationFailed([{ field, code: 'invalid_format', message }]);
}

/** Throws 400 validation_failed unless `address` is base58 decoding to exactly 32 bytes. */
export function assertSolanaAddress(address: string, field = 'address'): void {
  if (!isSolanaAddress(address)) throw invalidField(field, 'must be a base58 Solana address (32 bytes)');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
function decodeBase64(value: string, field: string): Buffer {
  if (typeof value !== 'string' || value.length === 0 || value.length % 4 !== 0 || !BASE64.test(value)) {
    throw invalidField(field, 'must be standard base64');
  }
  return Buffer.from(value, 'base64');
}

/**
 * The brand name as the statement may hold it: a CAIP-122 statement is one line, and brand names
 * may contain line breaks or other control characters, which would let a brand add lines (a second
 * `URI:`, `Resources:` …) that a wallet would show as part of the request. Each run of them becomes a
 * space; ordinary names are unchanged.
 */
function oneLine(value: string): string {
  return value.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ');
}

/** The Sign-In With Solana message of DESIGN.md §3, byte for byte. */
export function buildSiwsMessage(p: {
  baseUrl: string;
  address: string;
  brand: { slug: string; name: string };
  purpose: WalletPurpose;
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}): string {
  const name = oneLine(p.brand.name);
  const statement =
    p.purpose === 'signin' ? `Sign in to ${name}` : `Link this wallet to your account on ${name}`;
  return [
    `${new URL(p.baseUrl).host} wants you to sign in with your Solana account:`,
    p.address,
    '',
    statement,
    '',
    `URI: ${p.baseUrl}`,
    'Version: 1',
    'Chain ID: mainnet',
    `Nonce: ${p.nonce}`,
    `Issued At: ${p.issuedAt.toISOString()}`,
    `Expiration Time: ${p.expiresAt.toISOString()}`,
    'Resources:',
    `- brand:${p.brand.slug}`,
  ].join('\n');
}

/**
 * The last checks of a proof, once its challenge was found and redeemed: the body's address is the
 * message's, and the Ed25519 signature over the exact bytes verifies (else bad_signature).
 */
export async function checkWalletSignature(
  challengeAddress: string,
  proofAddress: string,
  signed: Buffer,
  signature: Buffer,
): Promise<void> {
  if (!safeEqual(proofAddress, challengeAddress)) throw badSignature();
  if (!(await walletSigned(challengeAddress, signed, signature))) throw badSignature();
}

/** Whether `signature` over `signed` verifies for the wallet `address` (a valid Solana address). */
export function walletSigned(address: string, signed: Buffer, signature: Buffer): Promise<boolean> {
  return verifyEd25519(decodeAddress(address), signed, signature);
}

/** The proof's signature and signed bytes, decoded and shape-checked (else 400 validation_failed). */
export function decodeWalletProof(proof: { address: string; signature: string; signedMessage: string }): {
  signature: Buffer;
  signed: Buffer;
} {
  assertSolanaAddress(proof.address);
  const signature = decodeBase64(proof.signature, 'signature');
  const signed = decodeBase64(proof.signedMessage, 'signedMessage');
  if (signature.length !== 64) throw invalidField('signature', 'must be a 64-byte Ed25519 signature');
  return { signature, signed };
}
