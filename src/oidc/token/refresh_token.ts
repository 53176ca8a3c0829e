import { OAuthError } from '../../http/errors.js';
import { sha256 } from '../../lib/hash.js';
import { revokeFamily } from '../revocation.js';
import { issueTokens } from '../tokens.js';
import { type Grant, invalidGrant, parseScope, required } from './grant.js';

export const refreshTokenGrant: Grant = {
  name: 'refresh_token',
  async handler({ ctx, client, body }) {
    const token = required(body, 'refresh_token');
    const requested = body.scope === undefined ? null : parseScope(body.scope);
    const now = ctx.clock.now();
    const hash = sha256(token);

    // Consume before any other check: single use, and of two concurrent refreshes one wins.
    const row = await ctx.db
      .updateTable('refresh_tokens')
      .set({ consumed_at: now })
      .where('token_hash', '=', hash)
      .where('consumed_at', 'is', null)
      .where('revoked_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      const seen = await ctx.db
        .selectFrom('refresh_tokens')
        .select(['family_id', 'client_id', 'revoked_at'])
        .where('token_hash', '=', hash)
        .executeTakeFirst();
      // A consumed token presented again: someone holds a copy. Revoke the family (RFC 9700 §4.14.2).
      if (seen && !seen.revoked_at && seen.client_id === client.clientId)
        await revokeFamily(ctx.db, ctx.clock, seen.family_id);
      throw invalidGrant('the refresh token is invalid, expired, revoked or already used');
    }
    if (row.client_id !== client.clientId) {
      // Another client holds this client's token: treat the family as compromised.
      await revokeFamily(ctx.db, ctx.clock, row.family_id);
      throw invalidGrant('the refresh token was issued to another client');
    }
    if (row.expires_at.getTime() <= now.getTime()) throw invalidGrant('the refresh token has expired');

    let scopes = row.scopes;
    if (requested && requested.length > 0) {
      const extra = requested.filter((s) => !row.scopes.includes(s));
      if (extra.length > 0)
        throw new OAuthError('invalid_scope', `scope exceeds the original grant: ${extra.join(' ')}`);
      scopes = requested;
    }
    return issueTokens(ctx, {
      client,
      grant: 'refresh_token',
      scopes,
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
