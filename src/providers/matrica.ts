import { isSolanaAddress } from '../lib/solana.js';
import { asObject, httpUrl, type OAuthProviderDefinition, str } from './provider.js';

/** Most wallets taken from a Matrica profile (they are only offered, never stored). */
const MAX_OFFERED_WALLETS = 20;

/**
 * Matrica: OAuth 2.0 with PKCE and its `profile` and `wallets` scopes. The wallets Matrica lists
 * are offered to the user for linking; a wallet is linked only with its own signature.
 */
export const matrica: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'matrica',
  oidc: false,
  pkce: true,
  clientAuth: 'client_secret_post',
  defaultScopes: ['profile', 'wallets'],
  endpoints: {
    authorizationUrl: 'https://matrica.io/oauth2',
    tokenUrl: 'https://api.matrica.io/oauth2/token',
    userinfoUrl: 'https://api.matrica.io/oauth2/user/profile',
  },
  async identity({ endpoints, fetchJson }) {
    const me = asObject(await fetchJson(endpoints.userinfoUrl!));
    const id = str(me.id);
    if (!id) throw new Error('the Matrica profile has no id');
    const offered: string[] = [];
    try {
      const wallets = await fetchJson(walletsUrl(endpoints.userinfoUrl!));
      for (const w of Array.isArray(wallets) ? wallets : []) {
        const address = str(asObject(w).address) ?? str(asObject(w).id);
        if (address && isSolanaAddress(address) && !offered.includes(address)) offered.push(address);
        if (offered.length >= MAX_OFFERED_WALLETS) break;
      }
    } catch {
      // The wallet list is a convenience; sign-in does not depend on it.
    }
    return {
      externalUserId: id,
      username: str(me.username),
      pictureUrl: httpUrl(me.pfp ?? me.avatar),
      ...(offered.length ? { offeredWallets: offered } : {}),
    };
  },
};

/** The wallets endpoint sits next to the profile endpoint (`…/user/profile` → `…/user/wallets`). */
function walletsUrl(profileUrl: string): string {
  const u = new URL(profileUrl);
  u.pathname = u.pathname.replace(/\/profile\/?$/, '/wallets');
  if (!u.pathname.endsWith('/wallets')) u.pathname = `${u.pathname.replace(/\/$/, '')}/wallets`;
  return u.toString();
}
