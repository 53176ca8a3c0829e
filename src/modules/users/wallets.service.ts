import { CONSOLE_BRAND_ID, CONSOLE_BRAND_SLUG } from '../../config/system.js';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Trx } from '../../db/schema.js';
import { ApiError, conflict, forbidden, notFound } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { assertSolanaAddress, badSignature } from '../../solana/siws.js';
import { createWalletChallenge, verifyWalletProof } from '../../oidc/signin/wallet-challenges.js';
import { WALLET_PROVIDER } from '../../providers/types.js';
import { recordActivity } from './activity.js';
import { presentPublicKey, type UserPublicKeyView } from './user.presenter.js';
import * as q from './users.queries.js';
import { lastSignInMethod, lockAndCountSignInMethods } from './users.service.js';

export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

export const walletInUse = () =>
  new ApiError(
    409,
    'wallet_in_use',
    'this wallet is linked to another account; send force: true to move it',
    {
      force: true,
    },
  );

async function consoleBrand(ctx: AppContext) {
  const brand = await ctx.stores.signin.brands.presentation(CONSOLE_BRAND_ID);
  if (!brand) return { id: CONSOLE_BRAND_ID, slug: CONSOLE_BRAND_SLUG, name: 'Gatehouse Console' };
  return { id: brand.id, slug: brand.slug, name: brand.name };
}

export async function listPublicKeys(ctx: AppContext, userId: string): Promise<UserPublicKeyView[]> {
  const rows = await q.walletsOfUsers(ctx.db, [userId]);
  return rows.map(presentPublicKey);
}

/** A "Link this wallet…" challenge of the console brand, bound to the caller (5 minutes, single use). */
export async function walletLinkChallenge(ctx: AppContext, userId: string, address: string) {
  assertSolanaAddress(address);
  const { message, expiresAt } = await createWalletChallenge(ctx, {
    address,
    brand: await consoleBrand(ctx),
    purpose: 'link',
    userId,
  });
  return { message, expiresAt: expiresAt.toISOString() };
}

/**
 * Runs the proof check of DESIGN.md §3 and whatever `then` does in one transaction. A proof that
 * fails after its challenge was consumed still burns the challenge (that part commits); a failure
 * in `then` (wallet in use, last sign-in method) rolls back, so the same signed challenge can be
 * sent again (for example with `force: true`).
 */
async function withWalletProof<T>(
  ctx: AppContext,
  userId: string,
  proof: { address: string; signature: string; signedMessage: string },
  then: (trx: Trx, address: string) => Promise<T>,
): Promise<T> {
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    let address: string;
    try {
      const verified = await verifyWalletProof(ctx, trx, {
        ...proof,
        brandId: CONSOLE_BRAND_ID,
        purpose: 'link',
      });
      // A link challenge belongs to the user who asked for it.
      if (verified.userId !== userId) throw badSignature();
      address = verified.address;
    } catch (e) {
      if (e instanceof ApiError) return { error: e };
      throw e;
    }
    return { value: await then(trx, address) };
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/**
 * Links a wallet after a fresh proof over a link challenge. A wallet linked to another account is
 * 409 `wallet_in_use`; with `force: true` it moves to the caller, which needs (besides the wallet's
 * own signature, which proves control of the other account's sign-in method) a sign-in by the caller
 * within `walletForceReauthWindow` (the access token's `auth_time`).
 */
export async function linkWallet(
  ctx: AppContext,
  userId: string,
  input: {
    address: string;
    signature: string;
    signedMessage: string;
    label?: string;
    force?: boolean;
    /** `auth_time` of the caller's access token (unix seconds); absent for API keys. */
    authTime?: number;
  },
  meta: RequestMeta,
): Promise<UserPublicKeyView> {
  assertSolanaAddress(input.address);
  if (input.force) {
    const fresh =
      input.authTime !== undefined && ctx.clock.nowSec() - input.authTime <= defaults.walletForceReauthWindow;
    if (!fresh)
      throw forbidden(
        ['recent_sign_in'],
        `moving a wallet from another account needs a sign-in within the last ${defaults.walletForceReauthWindow / 60} minutes`,
      );
  }
  return withWalletProof(ctx, userId, input, async (trx, address) => {
    const label = input.label?.trim() || null;
    const primary = !(await q.hasPrimaryWallet(trx, userId));
    /** Links the wallet to the caller and records it; undefined when another account holds it. */
    const link = async () => {
      const row = await q.insertWallet(trx, {
        id: newId('upk_'),
        userId,
        address,
        label,
        isPrimary: primary,
        now: ctx.clock.now(),
      });
      if (!row) return undefined;
      await recordActivity(trx, ctx.clock, {
        userId,
        type: 'link_provider',
        provider: WALLET_PROVIDER,
        ...meta,
      });
      return presentPublicKey(row);
    };
    const linked = await link();
    if (linked) return linked;
    const holder = await q.lockWalletByAddress(trx, address);
    if (holder.user_id === userId) throw conflict('this wallet is already linked to your account');
    if (!input.force) throw walletInUse();
    // The wallet leaves the other account; if it was its primary, its oldest other wallet takes over.
    await q.deleteWallet(trx, holder.id);
    if (holder.is_primary) await q.promoteOldestWallet(trx, holder.user_id);
    await recordActivity(trx, ctx.clock, {
      userId: holder.user_id,
      type: 'unlink_provider',
      provider: WALLET_PROVIDER,
    });
    // The holder's row is locked and gone: nobody else can take the address before we commit.
    const moved = await link();
    if (!moved) throw walletInUse();
    return moved;
  });
}

/** Label and primary flag. Setting one primary unsets the others in the same transaction. */
export async function updateWallet(
  ctx: AppContext,
  userId: string,
  id: string,
  patch: { label?: string | null; isPrimary?: boolean },
): Promise<UserPublicKeyView> {
  return ctx.db.transaction().execute(async (trx) => {
    const key = await q.findWalletOf(trx, userId, id, true);
    if (!key) throw notFound('wallet');
    if (patch.isPrimary === true) await q.unsetOtherPrimaryWallets(trx, userId, id);
    const set: { label?: string | null; is_primary?: boolean } = {};
    if (patch.label !== undefined) set.label = patch.label === null ? null : patch.label.trim() || null;
    if (patch.isPrimary !== undefined) set.is_primary = patch.isPrimary;
    const row = await q.updateWalletRow(trx, id, set);
    return presentPublicKey(row);
  });
}

/**
 * Removes a wallet after a fresh proof by that wallet over a link challenge. The last sign-in
 * method of the account cannot be removed (422). A removed primary passes primacy to the oldest
 * remaining wallet.
 */
export async function unlinkWallet(
  ctx: AppContext,
  userId: string,
  id: string,
  proof: { signature: string; signedMessage: string },
  meta: RequestMeta,
): Promise<void> {
  const key = await q.findWalletOf(ctx.db, userId, id);
  if (!key) throw notFound('wallet');
  await withWalletProof(ctx, userId, { address: key.address, ...proof }, async (trx) => {
    const methods = await lockAndCountSignInMethods(trx, userId);
    const removed = await q.deleteWalletOf(trx, userId, id);
    if (!removed) throw notFound('wallet');
    if (methods <= 1) throw lastSignInMethod();
    if (removed.is_primary) await q.promoteOldestWallet(trx, userId);
    await recordActivity(trx, ctx.clock, {
      userId,
      type: 'unlink_provider',
      provider: WALLET_PROVIDER,
      ...meta,
    });
  });
}
