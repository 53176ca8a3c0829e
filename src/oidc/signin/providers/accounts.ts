import type { AppContext } from '../../../context.js';
import type { Executor } from '../../../db/schema.js';
import { ApiError } from '../../../http/errors.js';
import { recordActivity } from '../../../modules/users/activity.js';
import {
  createUser,
  oauthLinkTokens,
  restoreIfInGrace,
  touchUser,
  upsertOAuthLink,
} from '../../../modules/users/users.service.js';
import type { ExternalIdentity, ProviderTokens } from '../../../providers/provider.js';

export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

/** The live user a provider account is linked to, if any. */
export async function linkedUser(
  db: Executor,
  provider: string,
  externalUserId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_links')
    .innerJoin('users', 'users.id', 'oauth_links.user_id')
    .select('users.id')
    .where('oauth_links.provider', '=', provider)
    .where('oauth_links.external_user_id', '=', externalUserId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Records (or refreshes) the link and its provider tokens, sealed by upsertOAuthLink. A later
 * sign-in that brings no refresh token keeps the one stored.
 */
async function saveLink(
  ctx: AppContext,
  trx: Executor,
  input: {
    userId: string;
    provider: string;
    brandId: string;
    identity: ExternalIdentity;
    tokens?: ProviderTokens;
  },
): Promise<string> {
  const { identity, tokens } = input;
  const existing = await trx
    .selectFrom('oauth_links')
    .select('id')
    .where('provider', '=', input.provider)
    .where('external_user_id', '=', identity.externalUserId)
    .executeTakeFirst();
  let refreshToken = tokens?.refreshToken ?? null;
  if (!refreshToken && existing && tokens)
    refreshToken = (await oauthLinkTokens(ctx, existing.id))?.refreshToken ?? null;
  const id = await upsertOAuthLink(ctx, trx, {
    userId: input.userId,
    provider: input.provider,
    externalUserId: identity.externalUserId,
    emailAddress: identity.email ?? null,
    username: identity.username ?? null,
    accessToken: tokens?.accessToken ?? null,
    refreshToken,
    tokenExpiresAt: tokens?.expiresAt ?? null,
  });
  await trx.updateTable('oauth_links').set({ brand_id: input.brandId }).where('id', '=', id).execute();
  return id;
}

/**
 * The account a provider identity signs in to: the linked user; else an account in its deletion
 * grace window that had this identity (restored); else a new user with the provider's profile. An
 * email address never picks an account: only (provider, external id) does.
 */
export async function userForIdentity(
  ctx: AppContext,
  trx: Executor,
  input: { provider: string; brandId: string; identity: ExternalIdentity; tokens?: ProviderTokens },
): Promise<{ userId: string; created: boolean; restored: boolean }> {
  const { identity } = input;
  const linked = await linkedUser(trx, input.provider, identity.externalUserId);
  if (linked) {
    await saveLink(ctx, trx, { ...input, userId: linked });
    return { userId: linked, created: false, restored: false };
  }
  const restored = await restoreIfInGrace(trx, ctx.clock, {
    kind: 'oauth',
    provider: input.provider,
    externalUserId: identity.externalUserId,
  });
  const userId =
    restored ??
    (
      await createUser(trx, ctx.clock, {
        username: identity.username ?? null,
        firstName: identity.firstName ?? null,
        lastName: identity.lastName ?? null,
        email: identity.email ?? null,
        emailVerified: identity.emailVerified ?? false,
        externalProfilePictureUrl: identity.pictureUrl ?? null,
      })
    ).id;
  await saveLink(ctx, trx, { ...input, userId });
  await touchUser(trx, ctx.clock, userId);
  return { userId, created: !restored, restored: !!restored };
}

/**
 * Link mode: attaches the provider identity to the signed-in user who started it. 409 when the
 * identity belongs to another live account.
 */
export async function linkIdentity(
  ctx: AppContext,
  input: {
    userId: string;
    provider: string;
    brandId: string;
    identity: ExternalIdentity;
    tokens?: ProviderTokens;
    meta: RequestMeta;
  },
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const user = await trx
      .selectFrom('users')
      .select('id')
      .where('id', '=', input.userId)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!user) throw new ApiError(404, 'not_found', 'user not found');
    const holder = await linkedUser(trx, input.provider, input.identity.externalUserId);
    if (holder && holder !== input.userId) {
      throw new ApiError(409, 'conflict', 'this provider account is linked to another user');
    }
    await saveLink(ctx, trx, input);
    await recordActivity(trx, ctx.clock, {
      userId: input.userId,
      type: 'link_provider',
      provider: input.provider,
      ...input.meta,
    });
  });
}
