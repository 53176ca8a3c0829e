import type { AppContext } from '../context.js';
import type { ProviderConfig } from './types.js';
import type { ProviderType } from './types.js';

/** What an upstream provider says about the person who signed in. */
export interface ExternalIdentity {
  externalUserId: string;
  /**
   * The key this provider's links had before `externalUserId` was namespaced (Telegram's bare user
   * id, before links were keyed by bot). A link still under it is adopted only through the brand it
   * was last used through (`userForIdentity`).
   */
  legacyExternalUserId?: string;
  email?: string;
  emailVerified?: boolean;
  username?: string;
  firstName?: string;
  lastName?: string;
  pictureUrl?: string;
  /** Wallets the provider lists (Matrica): offered for linking with a signature, never trusted. */
  offeredWallets?: string[];
}

/** The endpoints of one provider for one brand, after configuration overrides. */
export interface ProviderEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl?: string;
  revocationUrl?: string;
  /** OIDC providers only. */
  issuer?: string;
  jwksUrl?: string;
}

/** The token endpoint's answer, as much of it as the flows use. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: Date;
  idToken?: string;
  /** Verified ID token claims (OIDC providers). */
  claims?: Record<string, unknown>;
}

export interface OAuthProviderDefinition {
  kind: 'oauth';
  type: Exclude<ProviderType, 'telegram'>;
  /** OIDC providers get a `nonce` and their ID token is verified against the provider's JWKS. */
  oidc: boolean;
  /** Sends a PKCE S256 challenge. */
  pkce: boolean;
  /** How the client authenticates at the token endpoint. */
  clientAuth: 'client_secret_post' | 'client_secret_basic';
  defaultScopes: string[];
  /** The real endpoints; `{tenant}` is replaced for Microsoft. */
  endpoints: ProviderEndpoints;
  /** Extra authorization request parameters (Apple's form_post). */
  extraAuthParams?: Record<string, string>;
  /** The client secret to send (Apple's is a JWT built from its key). */
  clientSecret?(ctx: AppContext, config: ProviderConfig, endpoints: ProviderEndpoints): Promise<string>;
  /** The issuer an ID token must carry (Microsoft's multi-tenant issuer names the tenant). */
  expectedIssuer?(endpoints: ProviderEndpoints, claims: Record<string, unknown>, overridden: boolean): string;
  /**
   * Maps what the provider returned to an identity. `fetchJson` calls the provider's API with the
   * access token; `callback` holds the callback's own parameters (Apple posts the name there).
   */
  identity(input: {
    tokens: ProviderTokens;
    endpoints: ProviderEndpoints;
    fetchJson: (url: string) => Promise<unknown>;
    callback: URLSearchParams;
  }): Promise<ExternalIdentity>;
}

export interface TelegramProviderDefinition {
  kind: 'telegram';
  type: 'telegram';
  /** The Login Widget script. */
  widgetScriptUrl: string;
}

export type ProviderDefinition = OAuthProviderDefinition | TelegramProviderDefinition;

/** A string claim or field, trimmed; undefined when absent or empty. */
export function str(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  return v ? v : undefined;
}

/** An http(s) URL, or undefined (pictures end up in `<img src>`). */
export function httpUrl(value: unknown): string | undefined {
  const v = str(value);
  if (!v) return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** Booleans as OIDC providers send them (Apple sends "true"). */
export function bool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

export function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** Splits a display name into first and last names when the provider gives only one. */
export function splitName(name: string | undefined): { firstName?: string; lastName?: string } {
  if (!name) return {};
  const parts = name.trim().split(/\s+/);
  if (parts.length === 1) return { firstName: parts[0] };
  return { firstName: parts.slice(0, -1).join(' '), lastName: parts[parts.length - 1] };
}

/** Standard OIDC claims → identity (Google, Apple, Microsoft). */
export function identityFromClaims(claims: Record<string, unknown>): ExternalIdentity {
  const sub = str(claims.sub);
  if (!sub) throw new Error('the ID token has no subject');
  const out: ExternalIdentity = { externalUserId: sub };
  const email = str(claims.email);
  if (email) out.email = email;
  const verified = bool(claims.email_verified);
  if (verified !== undefined) out.emailVerified = verified;
  const first = str(claims.given_name);
  const last = str(claims.family_name);
  if (first || last) {
    if (first) out.firstName = first;
    if (last) out.lastName = last;
  } else Object.assign(out, splitName(str(claims.name)));
  const picture = httpUrl(claims.picture);
  if (picture) out.pictureUrl = picture;
  return out;
}
