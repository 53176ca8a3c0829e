import { OAuthError } from '../http/errors.js';
import { issueTokens } from './tokens.js';
import { type Grant, parseScope } from './grant.js';

/** Scopes that only mean something for a user (an ID token, a refresh token). */
const USER_ONLY = new Set(['openid', 'offline_access']);

/**
 * The benchmarked hot path: the client comes from the cache and its secret was checked with one
 * SHA-256; here the scope check and one signature. No user, no refresh token, no ID token.
 */
export const clientCredentialsGrant: Grant = {
  name: 'client_credentials',
  async handler({ ctx, client, body }) {
    let scopes = parseScope(body.scope);
    if (scopes.length === 0) scopes = client.allowedScopes.filter((s) => !USER_ONLY.has(s));
    for (const s of scopes) {
      if (USER_ONLY.has(s) || !client.allowedScopes.includes(s))
        throw new OAuthError('invalid_scope', `scope not allowed for this client: ${s}`);
    }
    return issueTokens(ctx, { client, grant: 'client_credentials', scopes });
  },
};
