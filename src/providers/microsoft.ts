import { identityFromClaims, type OAuthProviderDefinition, str } from './provider.js';

/** Microsoft's v2.0 issuer names the tenant the account belongs to (`tid`), not the one asked for. */
const ISSUER_TEMPLATE = 'https://login.microsoftonline.com/{tenantid}/v2.0';
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Microsoft identity platform (v2.0): OpenID Connect with PKCE. The tenant in the URLs is the
 * connection's `tenant` (default `common`). `sub` is pairwise per application, so the account is
 * keyed by tenant and object id when the token carries them (stable across a brand's apps).
 */
export const microsoft: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'microsoft',
  oidc: true,
  pkce: true,
  clientAuth: 'client_secret_post',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: {
    authorizationUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token',
    userinfoUrl: 'https://graph.microsoft.com/oidc/userinfo',
    issuer: ISSUER_TEMPLATE,
    jwksUrl: 'https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys',
  },
  expectedIssuer(endpoints, claims, overridden) {
    // A configured issuer (a mirror, a test) is compared exactly.
    if (overridden || !endpoints.issuer?.includes('{tenantid}')) return endpoints.issuer ?? '';
    const tid = str(claims.tid);
    if (!tid || !TENANT_ID.test(tid)) return ISSUER_TEMPLATE;
    return endpoints.issuer.replace('{tenantid}', tid);
  },
  async identity({ tokens }) {
    const claims = tokens.claims ?? {};
    const identity = identityFromClaims(claims);
    const tid = str(claims.tid);
    const oid = str(claims.oid);
    if (tid && oid) identity.externalUserId = `${tid}:${oid}`;
    if (!identity.email) {
      const preferred = str(claims.preferred_username);
      if (preferred?.includes('@')) identity.email = preferred;
    }
    // Microsoft does not assert that an email claim was verified.
    identity.emailVerified = false;
    return identity;
  },
};
