import type { AppContext } from '../../context.js';
import type { ProviderStateRow } from './stores.js';
import type { ExternalIdentity, ProviderTokens } from '../../providers/provider.js';

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
  const account = await ctx.stores.signin.accounts.describe(userId);
  if (!account || account.deleted) return null;
  return account.username ?? account.wallet ?? account.id;
}
