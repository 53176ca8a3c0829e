import { PROVIDER_TYPES } from '../config/index.js';

/** Declared with the configuration, which reads a `PROVIDER_<TYPE>_…` variable for each. */
export { PROVIDER_TYPES };
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** Wallet sign-in: always offered, placed by `providerOrder` (first by default). */
export const WALLET_PROVIDER = 'solana';
/** Everything `providerOrder` may list. */
export const SIGN_IN_METHODS = [WALLET_PROVIDER, ...PROVIDER_TYPES] as const;

/** Brand credentials for OAuth providers (google, microsoft, discord, facebook, x, matrica). */
export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  /** microsoft only: `common`, `organizations`, `consumers`, a tenant id or domain. */
  tenant?: string;
}
export interface AppleProviderConfig {
  clientId: string;
  teamId: string;
  keyId: string;
  privateKey: string;
}
export interface TelegramProviderConfig {
  botToken: string;
  botUsername: string;
}
export type ProviderConfig = OAuthProviderConfig | AppleProviderConfig | TelegramProviderConfig;
