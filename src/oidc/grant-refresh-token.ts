import { OAuthError } from '../http/errors.js';
import { sha256 } from '../lib/hash.js';
import { revokeFamily } from './revocation.js';
import { decideGates, UNMET_REQUIREMENT } from './gates.js';
import { issueTokens } from './tokens.js';
import { type Grant, invalidGrant, parseScope, required } from './grant.js';

export const refreshTokenGrant: Grant = {
  name: 'refresh_token',
  async handler({ ctx, client, body }) {
    const token = required(body, 'refresh_token');
    const requested = body.scope === undefined ? null : parseScope(body.scope);
    const now = ctx.clock.now();
    const hash = sha256(token);

    // The request is checked completely (client, expiry, scope) before the token is consumed, so a
    // bad request never burns it and the client's corrected retry is not taken for reuse.
    const found = await ctx.stores.tokens.findRefresh(hash);
    if (!found || found.revoked_at)
      throw invalidGrant('the refresh token is invalid, expired, revoked or already used');
    if (found.client_id !== client.clientId) {
      // Another client holds this client's live token: treat the family as compromised.
      if (!found.consumed_at) await revokeFamily(ctx, found.family_id);
      throw invalidGrant('the refresh token was issued to another client');
    }
    // A consumed token presented again: someone holds a copy. Revoke the family (RFC 9700 §4.14.2).
    const reuse = async () => {
      await revokeFamily(ctx, found.family_id);
      return invalidGrant('the refresh token is invalid, expired, revoked or already used');
    };
    if (found.consumed_at) throw await reuse();
    if (found.expires_at.getTime() <= now.getTime()) throw invalidGrant('the refresh token has expired');
    // The grant as the app may still hold it: a scope taken out of the app's allowed scopes since
    // leaves the grant at its next refresh (offline_access too: then no new refresh token).
    const grantScopes = found.scopes.filter((s) => client.allowedScopes.includes(s));
    let scopes = grantScopes;
    if (requested && requested.length > 0) {
      const extra = requested.filter((s) => !found.scopes.includes(s));
      if (extra.length > 0)
        throw new OAuthError('invalid_scope', `scope exceeds the original grant: ${extra.join(' ')}`);
      const withdrawn = requested.filter((s) => !grantScopes.includes(s));
      if (withdrawn.length > 0)
        throw new OAuthError('invalid_scope', `scope not allowed: ${withdrawn.join(' ')}`);
      scopes = requested;
    }
    // Gate policies re-evaluated before the token is consumed (DESIGN §3): a failed required policy
    // refuses the refresh (the token stays as it was), a gated scope that fails is left out of
    // these tokens but kept in the grant, and a chain that cannot be read burns nothing.
    const gates = await decideGates(ctx, client, found.user_id, scopes);
    if (!gates.requirementMet) throw invalidGrant(UNMET_REQUIREMENT);

    // Consumed atomically: of two concurrent refreshes one wins, the other counts as reuse.
    const row = await ctx.stores.tokens.consumeRefresh(found.id, now);
    if (!row) throw await reuse();
    return issueTokens(ctx, {
      client,
      grant: 'refresh_token',
      scopes: gates.scopes,
      // The new refresh token carries the grant as it was (RFC 6749 §6: its scope is identical to the
      // old one's, less what the app may no longer hold); a narrower `scope` narrows only these
      // tokens, so a later refresh can ask for more.
      gates: { grantScopes, dropped: gates.dropped, passedPolicies: gates.passedPolicies },
      refreshed: true,
      user: {
        id: row.user_id,
        authTime: Number(row.auth_time),
        familyId: row.family_id,
        sessionId: row.session_id,
      },
    });
  },
};
