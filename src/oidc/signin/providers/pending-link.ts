import type { AppContext } from '../../../context.js';
import type { ProviderStateRow } from './states.js';
import type { ExternalIdentity, ProviderTokens } from '../../../providers/provider.js';

/** What a link's provider return yields, parked until the browser confirms. */
export interface PendingLink {
  identity: ExternalIdentity;
  tokens?: ProviderTokens;
}

const aad = (stateId: string) => `provider_state:${stateId}:pending_link`;

/** Sealed (AES-256-GCM, bound to the state row): the provider tokens never sit in plaintext. */
export function sealPendingLink(ctx: AppContext, stateId: string, pending: PendingLink): string {
  return ctx.encryptor.encrypt(JSON.stringify(pending), aad(stateId));
}

export function openPendingLink(ctx: AppContext, state: ProviderStateRow): PendingLink {
  const pending = JSON.parse(ctx.encryptor.decrypt(state.pending_link_enc!, aad(state.id))) as PendingLink;
  if (pending.tokens?.expiresAt) pending.tokens.expiresAt = new Date(pending.tokens.expiresAt);
  return pending;
}

/** How the confirmation page names the provider account: its username, email, or id. */
export function providerAccountLabel(identity: ExternalIdentity): string {
  return identity.username || identity.email || identity.externalUserId;
}

/** How the confirmation page names the Gatehouse account: username, primary wallet, or id. */
export async function accountLabel(ctx: AppContext, userId: string): Promise<string | null> {
  const user = await ctx.db
    .selectFrom('users')
    .select(['id', 'username'])
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!user) return null;
  if (user.username) return user.username;
  const wallet = await ctx.db
    .selectFrom('user_public_keys')
    .select('address')
    .where('user_id', '=', userId)
    .orderBy('is_primary', 'desc')
    .executeTakeFirst();
  return wallet?.address ?? user.id;
}
