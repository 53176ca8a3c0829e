import { importPKCS8, SignJWT } from 'jose';
import type { AppleProviderConfig } from './types.js';
import { asObject, bool, identityFromClaims, type OAuthProviderDefinition, str } from './provider.js';

/** Apple's client secrets live this long; a fresh one is made for every token request. */
const CLIENT_SECRET_TTL = 300;
const APPLE_AUDIENCE = 'https://appleid.apple.com';

/**
 * Sign in with Apple: OpenID Connect whose client secret is an ES256 JWT signed with the team's key
 * (iss = team id, sub = client id, aud = Apple, kid = key id). Asking for `name email` requires
 * `response_mode=form_post`: Apple POSTs the code, and on the first sign-in only the user's name.
 */
export const apple: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'apple',
  oidc: true,
  pkce: false,
  clientAuth: 'client_secret_post',
  defaultScopes: ['name', 'email'],
  extraAuthParams: { response_mode: 'form_post' },
  endpoints: {
    authorizationUrl: 'https://appleid.apple.com/auth/authorize',
    tokenUrl: 'https://appleid.apple.com/auth/token',
    revocationUrl: 'https://appleid.apple.com/auth/revoke',
    issuer: 'https://appleid.apple.com',
    jwksUrl: 'https://appleid.apple.com/auth/keys',
  },
  async clientSecret(ctx, config) {
    return appleClientSecret(config as AppleProviderConfig, ctx.clock.nowSec());
  },
  async identity({ tokens, callback }) {
    const identity = identityFromClaims(tokens.claims ?? {});
    identity.emailVerified = bool(tokens.claims?.email_verified) ?? false;
    // `user` is JSON Apple posts once, on the first authorization: the only place the name appears.
    const raw = callback.get('user');
    if (raw && raw.length < 4096) {
      try {
        const name = asObject(asObject(JSON.parse(raw)).name);
        const first = str(name.firstName);
        const last = str(name.lastName);
        if (first) identity.firstName = first;
        if (last) identity.lastName = last;
      } catch {
        // A malformed name is not worth failing the sign-in for.
      }
    }
    return identity;
  },
};

export async function appleClientSecret(config: AppleProviderConfig, nowSec: number): Promise<string> {
  const key = await importPKCS8(config.privateKey, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: config.keyId })
    .setIssuer(config.teamId)
    .setSubject(config.clientId)
    .setAudience(APPLE_AUDIENCE)
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + CLIENT_SECRET_TTL)
    .sign(key);
}
