import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import type { Executor } from '../db/schema.js';
import { ApiError, validationFailed } from '../http/errors.js';
import { safeEqual, sha256 } from '../lib/hash.js';
import { newId, randomAlphanumeric } from '../lib/ids.js';
import { decodeAddress, isSolanaAddress } from '../lib/solana.js';
import { verifyEd25519 } from './ed25519.js';

export type WalletPurpose = 'signin' | 'link';

/** Random alphanumerics in a challenge's nonce (the format asks for at least 16). */
const NONCE_LENGTH = 24;

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
 * Issues a challenge for `address` to sign. Only hashes of the message and nonce are stored, with
 * the brand, address, purpose and expiry; the message is returned to be signed exactly.
 */
export async function createWalletChallenge(
  ctx: AppContext,
  input: { address: string; brand: ChallengeBrand; purpose: WalletPurpose; userId?: string },
  db: Executor = ctx.db,
): Promise<{ message: string; expiresAt: Date; nonce: string }> {
  assertSolanaAddress(input.address);
  const issuedAt = ctx.clock.now();
  const expiresAt = new Date(issuedAt.getTime() + defaults.walletChallengeTtl * 1000);
  const nonce = randomAlphanumeric(NONCE_LENGTH);
  const message = buildSiwsMessage({
    baseUrl: ctx.config.baseUrl,
    address: input.address,
    brand: input.brand,
    purpose: input.purpose,
    nonce,
    issuedAt,
    expiresAt,
  });
  await db
    .insertInto('wallet_challenges')
    .values({
      id: newId('wch_'),
      message_hash: sha256(Buffer.from(message, 'utf8')),
      nonce_hash: sha256(nonce),
      brand_id: input.brand.id,
      address: input.address,
      purpose: input.purpose,
      user_id: input.userId ?? null,
      created_at: issuedAt,
      expires_at: expiresAt,
      consumed_at: null,
    })
    .execute();
  return { message, expiresAt, nonce };
}

export interface WalletProof {
  address: string;
  /** Base64 Ed25519 signature (64 bytes). */
  signature: string;
  /** Base64 of the exact UTF-8 bytes that were signed. */
  signedMessage: string;
  brandId: string;
  purpose: WalletPurpose;
}

/**
 * Verifies a wallet's proof over a challenge this service issued, in the order of DESIGN.md §3:
 * issued by us (else bad_signature), for this brand (wrong_brand), not expired (stale_challenge),
 * consumed now with one atomic update (replayed_nonce), the body's address is the message's
 * (bad_signature), and the Ed25519 signature verifies (bad_signature).
 *
 * The consumption is part of `trx`: a caller that wants a failed attempt to burn the challenge
 * commits the transaction before rethrowing. Concurrent redemptions of one challenge serialise on
 * the row, so exactly one gets past the update.
 */
export async function verifyWalletProof(
  ctx: AppContext,
  trx: Executor,
  proof: WalletProof,
): Promise<{ address: string; userId: string | null }> {
  assertSolanaAddress(proof.address);
  const signature = decodeBase64(proof.signature, 'signature');
  const signed = decodeBase64(proof.signedMessage, 'signedMessage');
  if (signature.length !== 64) throw invalidField('signature', 'must be a 64-byte Ed25519 signature');

  const challenge = await trx
    .selectFrom('wallet_challenges')
    .select(['id', 'brand_id', 'address', 'purpose', 'user_id', 'expires_at'])
    .where('message_hash', '=', sha256(signed))
    .executeTakeFirst();
  if (!challenge || challenge.purpose !== proof.purpose) throw badSignature();
  if (challenge.brand_id !== proof.brandId) throw wrongBrand();
  const now = ctx.clock.now();
  if (challenge.expires_at.getTime() <= now.getTime()) throw staleChallenge();

  const consumed = await trx
    .updateTable('wallet_challenges')
    .set({ consumed_at: now })
    .where('id', '=', challenge.id)
    .where('consumed_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!consumed) throw replayedNonce();

  if (!safeEqual(proof.address, challenge.address)) throw badSignature();
  if (!verifyEd25519(decodeAddress(challenge.address), signed, signature)) throw badSignature();
  return { address: challenge.address, userId: challenge.user_id };
}

/** Deletes challenges past their expiry (a sweeper may call it; expired rows are useless). */
export async function pruneWalletChallenges(ctx: AppContext, db: Executor = ctx.db): Promise<number> {
  const res = await db
    .deleteFrom('wallet_challenges')
    .where('expires_at', '<', ctx.clock.now())
    .executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
