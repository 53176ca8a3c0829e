import { OAuthError } from '../http/errors.js';
import { issueTokens } from './tokens.js';
import { type Grant, parseScope } from './grant.js';

/** Scopes that only mean something for a user (an ID token, a refresh token, their wallets, gates). */
const USER_ONLY = new Set(['openid', 'offline_access', 'wallet', 'gates']);

/**
 * The benchmarked hot path: the client comes from the cache and its secret was checked with one
 * SHA-256; here the scope check and one signature. No user, no refresh token, no ID token.
 */
export const clientCredentialsGrant: Grant = {
  name: 'client_credentials',
  async handler({ ctx, client, body }) {
    // A gated scope is granted only to a user whose linked wallet passes its policy (DESIGN §3): a
    // machine has no wallet, so it never gets one.
    const userOnly = (s: string) => USER_ONLY.has(s) || (client.gatedScopes?.includes(s) ?? false);
    let scopes = parseScope(body.scope);
    if (scopes.length === 0) scopes = client.allowedScopes.filter((s) => !userOnly(s));
    for (const s of scopes) {
      if (userOnly(s) || !client.allowedScopes.includes(s))
        throw new OAuthError('invalid_scope', `scope not allowed for this client: ${s}`);
    }
    return issueTokens(ctx, { client, grant: 'client_credentials', scopes });
  },
};
