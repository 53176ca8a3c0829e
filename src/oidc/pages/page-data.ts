import type { AppContext } from '../../context.js';
import type { PageBrand } from './html.js';

/** What the hosted pages show of a brand (header, colour, favicon, footer), or null when gone. */
export function pageBrand(ctx: AppContext, brandId: string): Promise<PageBrand | null> {
  return ctx.stores.signin.brands.page(brandId);
}

/** A Solana address shortened for people: `3xmB…Ayf9`. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

export interface SignedInAs {
  /** What to call the account: the primary wallet (short), else the username, name or email. */
  label: string;
  /** The full value behind `label` (the whole address), for a tooltip. */
  full: string;
  /** True when the label is a wallet (the page offers "Use another wallet"). */
  wallet: boolean;
  /** The account's email, when it has one (the only case the consent page lists `email`). */
  email: string | null;
}

/** Who a consent or device page says is signed in. */
export async function signedInAs(ctx: AppContext, userId: string): Promise<SignedInAs> {
  const account = await ctx.stores.signin.accounts.describe(userId);
  const email = account?.email ?? null;
  if (account?.wallet)
    return { label: shortAddress(account.wallet), full: account.wallet, wallet: true, email };
  const name = [account?.firstName, account?.lastName].filter(Boolean).join(' ');
  const label = account?.username ? `@${account.username}` : name || email || userId;
  return { label, full: label, wallet: false, email };
}
