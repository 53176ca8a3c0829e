import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import { fileTrackers } from '../../modules/files/files.service.js';
import type { PageBrand } from './html.js';

/** What the hosted pages show of a brand (header, colour, favicon, footer), or null when gone. */
export async function pageBrand(ctx: AppContext, brandId: string): Promise<PageBrand | null> {
  const row = await ctx.db
    .selectFrom('brands')
    .select(['name', 'logo_file_id', 'primary_color', 'support_email', 'privacy_policy_url', 'terms_url'])
    .where('id', '=', brandId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const logo = row.logo_file_id
    ? (await fileTrackers(ctx.db, ctx.config, [row.logo_file_id])).get(row.logo_file_id)
    : undefined;
  return {
    name: row.name,
    logoUrl: logo?.url ?? null,
    primaryColor: row.primary_color,
    supportEmail: row.support_email,
    privacyPolicyUrl: row.privacy_policy_url,
    termsUrl: row.terms_url,
  };
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
export async function signedInAs(db: Executor, userId: string): Promise<SignedInAs> {
  const user = await db
    .selectFrom('users')
    .select(['username', 'first_name', 'last_name', 'email'])
    .where('id', '=', userId)
    .executeTakeFirst();
  const wallet = await db
    .selectFrom('user_public_keys')
    .select('address')
    .where('user_id', '=', userId)
    .orderBy('is_primary', 'desc')
    .orderBy('created_at', 'asc')
    .executeTakeFirst();
  const email = user?.email ?? null;
  if (wallet) return { label: shortAddress(wallet.address), full: wallet.address, wallet: true, email };
  const name = [user?.first_name, user?.last_name].filter(Boolean).join(' ');
  const label = user?.username ? `@${user.username}` : name || email || userId;
  return { label, full: label, wallet: false, email };
}
