import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { sha256 } from '../../lib/hash.js';
import { newId, randomAlphanumeric } from '../../lib/ids.js';
import {
  assertSolanaAddress,
  badSignature,
  buildSiwsMessage,
  type ChallengeBrand,
  checkWalletSignature,
  decodeWalletProof,
  replayedNonce,
  staleChallenge,
  type WalletPurpose,
  walletSigned,
  wrongBrand,
} from '../../solana/siws.js';
import { InteractionGone } from './errors.js';
import type { SigninStores, WalletChallengeRow } from './stores.js';

/** Random alphanumerics in a challenge's nonce (the format asks for at least 16). */
const NONCE_LENGTH = 24;

/**
 * Issues a challenge for `address` to sign. Only hashes of the message and nonce are stored, with
 * the brand, address, purpose and expiry; the message is returned to be signed exactly.
 */
export async function createWalletChallenge(
  ctx: AppContext,
  input: { address: string; brand: ChallengeBrand; purpose: WalletPurpose; userId?: string },
  db: Executor = ctx.db,
): Promise<{ message: string; expiresAt: Date; nonce: string }> {
  return issueWalletChallenge(ctx.stores.signin.on(db), ctx.clock, ctx.config.baseUrl, input);
}

export async function issueWalletChallenge(
  stores: SigninStores,
  clock: Clock,
  baseUrl: string,
  input: {
    address: string;
    brand: ChallengeBrand;
    purpose: WalletPurpose;
    userId?: string;
    /** The sign-in interaction it is issued in: none is issued once that is not live (404). */
    interactionId?: string;
  },
): Promise<{ message: string; expiresAt: Date; nonce: string }> {
  assertSolanaAddress(input.address);
  const issuedAt = clock.now();
  const expiresAt = new Date(issuedAt.getTime() + defaults.walletChallengeTtl * 1000);
  const nonce = randomAlphanumeric(NONCE_LENGTH);
  const message = buildSiwsMessage({ baseUrl, ...input, nonce, issuedAt, expiresAt });
  const row: WalletChallengeRow = {
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
  };
  if (input.interactionId === undefined) await stores.walletChallenges.insert(row);
  else if (!(await stores.walletChallenges.insertDuring(row, input.interactionId, issuedAt)))
    throw new InteractionGone();
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
export function verifyWalletProof(
  ctx: AppContext,
  trx: Executor,
  proof: WalletProof,
): Promise<{ address: string; userId: string | null }> {
  return redeemWalletProof(ctx.stores.signin.on(trx), ctx.clock, proof);
}

/** verifyWalletProof on stores (bound to the caller's transaction). */
export async function redeemWalletProof(
  stores: SigninStores,
  clock: Clock,
  proof: WalletProof,
): Promise<{ address: string; userId: string | null }> {
  const { signature, signed } = decodeWalletProof(proof);
  const messageHash = sha256(signed);
  const now = clock.now();
  // A challenge that passes every check is found and consumed by one update; only when none does,
  // the row is read to tell which check failed.
  const expected = { purpose: proof.purpose, brandId: proof.brandId, now };
  const challenge =
    (await stores.walletChallenges.consumeLive(messageHash, expected)) ??
    (await refuseChallenge(stores, messageHash, expected));
  await checkWalletSignature(challenge.address, proof.address, signed, signature);
  return { address: challenge.address, userId: challenge.user_id };
}

/**
 * Sign-in's redemption, in one statement when the proof is good: the signature is checked first
 * against the body's address (nothing is consumed for it), then the challenge consumed only when it
 * passes every check and was issued for that address, and the same statement marks the wallet used
 * and its live holder seen (`owner`; null when no live account holds it). Any other proof takes
 * redeemWalletProof's steps, which name the failure in DESIGN's order and burn the challenge as before.
 */
export async function redeemSignInProof(
  stores: SigninStores,
  clock: Clock,
  proof: WalletProof,
): Promise<{ address: string; owner?: string | null }> {
  const { signature, signed } = decodeWalletProof(proof);
  if (await walletSigned(proof.address, signed, signature)) {
    const expected = {
      purpose: proof.purpose,
      brandId: proof.brandId,
      address: proof.address,
      now: clock.now(),
    };
    const redeemed = await stores.walletChallenges.consumeForSignIn(sha256(signed), expected);
    if (redeemed) return { address: redeemed.challenge.address, owner: redeemed.ownerId };
  }
  return redeemWalletProof(stores, clock, proof);
}

/**
 * Why a challenge could not be consumed, in the order of DESIGN.md §3: not issued by us or for
 * another purpose (bad_signature), another brand's (wrong_brand), expired (stale_challenge),
 * consumed already (replayed_nonce). Returns the row only if it was consumed now after all.
 */
async function refuseChallenge(
  stores: SigninStores,
  messageHash: string,
  expected: { purpose: WalletPurpose; brandId: string; now: Date },
): Promise<WalletChallengeRow> {
  const challenge = await stores.walletChallenges.findByMessageHash(messageHash);
  if (!challenge || challenge.purpose !== expected.purpose) throw badSignature();
  if (challenge.brand_id !== expected.brandId) throw wrongBrand();
  if (challenge.expires_at.getTime() <= expected.now.getTime()) throw staleChallenge();
  if (!(await stores.walletChallenges.consume(challenge.id, expected.now))) throw replayedNonce();
  return challenge;
}
