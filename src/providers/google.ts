import { identityFromClaims, type OAuthProviderDefinition } from './provider.js';

/** Google: OpenID Connect with PKCE; the identity comes from the verified ID token. */
export const google: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'google',
  oidc: true,
  pkce: true,
  clientAuth: 'client_secret_post',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: {
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    revocationUrl: 'https://oauth2.googleapis.com/revoke',
    issuer: 'https://accounts.google.com',
    jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
  },
  // Google documents both forms of its issuer; a configured issuer is compared exactly.
  expectedIssuer(endpoints, claims, overridden) {
    if (!overridden && claims.iss === 'accounts.google.com') return 'accounts.google.com';
    return endpoints.issuer ?? '';
  },
  async identity({ tokens }) {
    return identityFromClaims(tokens.claims ?? {});
  },
};
