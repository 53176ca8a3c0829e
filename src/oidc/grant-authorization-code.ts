import { defaults } from '../config/defaults.js';
import { OAuthError } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import { safeEqual, sha256, sha256b64url } from '../lib/hash.js';
import { revokeFamily } from './revocation.js';
import type { AppContext } from '../context.js';
import type { Client } from './clients.js';
import { decideGates, type GateDecision, UNMET_REQUIREMENT } from './gates.js';
import type { AuthorizationCodeRow } from './stores.js';
import { issueTokens } from './tokens.js';
import { type Grant, invalidGrant, required } from './grant.js';

/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const authorizationCodeGrant: Grant = {
  name: 'authorization_code',
  async handler({ ctx, client, body }) {
    const code = required(body, 'code');
    const redirectUri = required(body, 'redirect_uri');
    const verifier = body.code_verifier;
    if (verifier !== undefined && !VERIFIER.test(verifier))
      throw new OAuthError('invalid_request', 'code_verifier must be 43-128 unreserved characters');

    const codeHash = sha256(code);
    // The access token's record is written by the consuming statement itself (one round trip).
    const jti = newId();
    const quick = await consumeWhenAllMatches(ctx, client, { codeHash, redirectUri, verifier, jti });
    if (quick) {
      // Nothing to decide before consuming (no required policy, no gated scope of the brand); a
      // brand scope the code holds is still checked against the brand's policies now.
      const gates = await decideGates(ctx, client, quick.user_id, quick.scopes);
      return issueCodeTokens(ctx, client, quick, gates, jti);
    }

    // The request is checked completely before the code is consumed: a request naming another
    // client or redirect URI never burns a valid code (DESIGN.md §5).
    const found = await ctx.stores.codes.find(codeHash);
    if (!found) throw invalidGrant('the authorization code is invalid, expired or already used');
    if (found.client_id !== client.clientId)
      throw invalidGrant('the authorization code was issued to another client');
    if (found.consumed_at) {
      // A second redemption means the code leaked: revoke what the first one issued (RFC 6749 §4.1.2).
      await revokeFamily(ctx, found.family_id);
      throw invalidGrant('the authorization code is invalid, expired or already used');
    }
    if (found.expires_at.getTime() <= ctx.clock.nowMs())
      throw invalidGrant('the authorization code has expired');
    if (found.redirect_uri !== redirectUri)
      throw invalidGrant('redirect_uri differs from the one of the authorization request');

    // PKCE is part of the request: a caller holding an intercepted code but not the verifier must not
    // burn it for the client that started the flow. One hash against the stored challenge.
    if (found.code_challenge) {
      if (!verifier || !safeEqual(sha256b64url(verifier), found.code_challenge))
        throw invalidGrant('PKCE verification failed');
    } else if (verifier !== undefined || !client.isConfidential) {
      // No challenge was stored: a verifier now is an injection attempt, and public clients always use PKCE.
      throw invalidGrant('PKCE verification failed');
    }

    // Gate policies at authorization (DESIGN §3), before the code is consumed: the requirement was
    // met at sign-in moments ago; a gated scope the user's wallets fail is left out of the tokens.
    const gates = await decideGates(ctx, client, found.user_id, found.scopes);
    if (!gates.requirementMet) throw invalidGrant(UNMET_REQUIREMENT);

    // Then consumed atomically, with the access token's record as on the quick path: of two
    // concurrent redemptions exactly one gets the row, and a second one revoking the family reaches
    // this token before it is answered (tokens.ts checks it with the refresh token's write).
    const row = await ctx.stores.codes.consumeMatching(
      codeHash,
      {
        clientId: found.client_id,
        redirectUri: found.redirect_uri,
        codeChallenge: found.code_challenge,
        now: ctx.clock.now(),
      },
      accessRecord(ctx, jti),
    );
    if (!row) {
      await revokeFamily(ctx, found.family_id);
      throw invalidGrant('the authorization code is invalid, expired or already used');
    }
    return issueCodeTokens(ctx, client, row, gates, jti);
  },
};

/**
 * The common case in one statement: a request that matches its code (client, redirect URI, PKCE)
 * consumes it at once, when no gate policy has to be evaluated first (the app requires none, its
 * brand gates no scope). Null when that does not apply or anything differs: the caller then checks
 * step by step, which names the error and never burns a code for a wrong request.
 */
function consumeWhenAllMatches(
  ctx: AppContext,
  client: Client,
  r: { codeHash: string; redirectUri: string; verifier: string | undefined; jti: string },
): Promise<AuthorizationCodeRow | null> | null {
  if (client.requiredGatePolicyId || client.gatedScopes?.length) return null;
  // A stored challenge needs the verifier; none stored is only for a confidential client sending none.
  if (r.verifier === undefined && !client.isConfidential) return null;
  const codeChallenge = r.verifier === undefined ? null : sha256b64url(r.verifier);
  return ctx.stores.codes.consumeMatching(
    r.codeHash,
    { clientId: client.clientId, redirectUri: r.redirectUri, codeChallenge, now: ctx.clock.now() },
    accessRecord(ctx, r.jti),
  );
}

/** The record of the access token a code's consuming statement writes (its jti and expiry). */
function accessRecord(ctx: AppContext, jti: string): { jti: string; expiresAt: Date } {
  return { jti, expiresAt: new Date(ctx.clock.nowMs() + defaults.accessTokenTtl * 1000) };
}

function issueCodeTokens(
  ctx: AppContext,
  client: Client,
  row: AuthorizationCodeRow,
  gates: GateDecision,
  recordedJti?: string,
) {
  return issueTokens(ctx, {
    client,
    grant: 'authorization_code',
    scopes: gates.scopes,
    recordedJti,
    gates: { grantScopes: row.scopes, dropped: gates.dropped, passedPolicies: gates.passedPolicies },
    user: {
      id: row.user_id,
      authTime: Number(row.auth_time),
      familyId: row.family_id,
      nonce: row.nonce ?? undefined,
      sessionId: row.session_id,
    },
  });
}
