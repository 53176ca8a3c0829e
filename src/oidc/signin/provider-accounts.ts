import type { AppContext } from '../../context.js';
import type { ExternalIdentity, ProviderTokens } from '../../providers/provider.js';
import type { RequestMeta } from './complete.js';
import { AccountGone, LinkedToAnotherUser } from './errors.js';
import type { SigninStores } from './stores.js';

interface IdentityInput {
  provider: string;
  brandId: string;
  identity: ExternalIdentity;
  tokens?: ProviderTokens;
}

/**
 * Records (or refreshes) the link and its provider tokens, sealed. A later sign-in that brings no
 * refresh token keeps the one stored.
 */
async function saveLink(tx: SigninStores, input: IdentityInput & { userId: string }): Promise<string> {
  const { identity, tokens } = input;
  const id = await tx.accounts.saveOAuthLink({
    userId: input.userId,
    provider: input.provider,
    brandId: input.brandId,
    externalUserId: identity.externalUserId,
    emailAddress: identity.email ?? null,
    username: identity.username ?? null,
    accessToken: tokens?.accessToken ?? null,
    refreshToken: tokens?.refreshToken ?? null,
    tokenExpiresAt: tokens?.expiresAt ?? null,
    hasTokens: !!tokens,
  });
  if (!id) throw new LinkedToAnotherUser();
  return id;
}

/**
 * The live user holding the identity's link. A link still under the identity's legacy key (a
 * Telegram link from before links were keyed by bot) is taken over, renamed to the current key,
 * only when it was last used through this brand: under its legacy key nothing says which bot
 * proved it, and a bot another org controls must not reach it.
 */
async function linkHolder(tx: SigninStores, input: IdentityInput): Promise<string | null> {
  const { identity } = input;
  const linked = await tx.accounts.linkedUser(input.provider, identity.externalUserId);
  if (linked || !identity.legacyExternalUserId) return linked;
  return tx.accounts.adoptLegacyLink({
    provider: input.provider,
    legacyExternalUserId: identity.legacyExternalUserId,
    externalUserId: identity.externalUserId,
    brandId: input.brandId,
  });
}

/**
 * The account a provider identity signs in to: the linked user; else an account in its deletion
 * grace window that had this identity (restored); else a new user with the provider's profile. An
 * email address never picks an account: only (provider, external id) does.
 */
export async function userForIdentity(
  tx: SigninStores,
  input: IdentityInput,
): Promise<{ userId: string; created: boolean; restored: boolean }> {
  const { identity } = input;
  const linked = await linkHolder(tx, input);
  if (linked) {
    await saveLink(tx, { ...input, userId: linked });
    return { userId: linked, created: false, restored: false };
  }
  const restored = await tx.accounts.restoreIfInGrace({
    kind: 'oauth',
    provider: input.provider,
    externalUserId: identity.externalUserId,
  });
  const userId =
    restored ??
    (
      await tx.accounts.create({
        username: identity.username ?? null,
        firstName: identity.firstName ?? null,
        lastName: identity.lastName ?? null,
        email: identity.email ?? null,
        emailVerified: identity.emailVerified ?? false,
        externalProfilePictureUrl: identity.pictureUrl ?? null,
      })
    ).id;
  await saveLink(tx, { ...input, userId });
  await tx.accounts.touch(userId);
  return { userId, created: !restored, restored: !!restored };
}

/**
 * Link mode: attaches the provider identity to the signed-in user who started it. 409 when the
 * identity belongs to another live account.
 */
export async function linkIdentity(
  ctx: AppContext,
  input: IdentityInput & { userId: string; meta: RequestMeta },
): Promise<void> {
  await ctx.stores.signin.atomic(async (tx) => {
    if (!(await tx.accounts.lockLive(input.userId))) throw new AccountGone();
    const holder = await linkHolder(tx, input);
    if (holder && holder !== input.userId) {
      throw new LinkedToAnotherUser();
    }
    await saveLink(tx, input);
    await tx.accounts.recordActivity({
      userId: input.userId,
      type: 'link_provider',
      provider: input.provider,
      ...input.meta,
    });
  });
}
