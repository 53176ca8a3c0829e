import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { newAuthorizationCode } from '../codes.js';
import { InteractionGone } from './errors.js';
import { finish, type LoadedInteraction, needsConsent, withQuery } from './interactions.js';
import { unmetRequirementRedirect } from './requirement.js';
import { endSessions } from './logout.js';
import {
  createSession,
  destroyRequestSession,
  renewSession,
  requestSession,
  setSessionCookie,
} from './sessions.js';
import type { SigninStores } from './stores.js';

export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

export function requestMeta(req: FastifyRequest): RequestMeta {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, ...(typeof ua === 'string' && ua ? { userAgent: ua } : {}) };
}

export interface SignedIn {
  userId: string;
  session: { id: string; token: string };
  authTime: Date;
  /** The browser's session of another user that this sign-in replaces: ended after the commit. */
  replaced: string | null;
  /** The client's redirect URI with a code, when the interaction was completed in the sign-in. */
  redirectTo?: string;
}

/**
 * Whether the code can be issued in the sign-in's own transaction, with no read or call outside it:
 * an authorize interaction of a first-party app (no consent step) without a required gate policy
 * (nothing to evaluate), whose id_token_hint (if any) names this user.
 */
function finishesAtSignIn(loaded: LoadedInteraction, userId: string): boolean {
  const { row, params, client } = loaded;
  return (
    row.kind === 'authorize' &&
    client.firstParty &&
    !client.requiredGatePolicyId &&
    (!params.idTokenHintSub || params.idTokenHintSub === userId)
  );
}

/**
 * Completes the interaction with the user on it and writes the code, in the sign-in's transaction:
 * session and code commit together. An interaction that ended meanwhile undoes the whole sign-in.
 */
async function finishInSignIn(
  tx: SigninStores,
  ctx: AppContext,
  loaded: LoadedInteraction,
  fields: { userId: string; sessionId: string; authTime: Date },
): Promise<string> {
  const { row, params, client } = loaded;
  if (!(await tx.interactions.completeSignedIn(row.id, fields, ctx.clock.now()))) throw new InteractionGone();
  const { code, row: codeRow } = newAuthorizationCode(ctx, {
    client,
    userId: fields.userId,
    redirectUri: params.redirectUri,
    scopes: params.scopes,
    nonce: params.nonce,
    codeChallenge: params.codeChallenge,
    authTime: Math.floor(fields.authTime.getTime() / 1000),
    sessionId: fields.sessionId,
  });
  await tx.codes.insert(codeRow);
  return withQuery(params.redirectUri, { code, state: params.state, iss: ctx.config.issuer });
}

/**
 * In the sign-in's transaction, once the account is known: marks it seen, renews the browser's
 * session of the brand when it is this user's (its `sid` stays; a fresh cookie and auth time) or
 * opens a fresh one, puts the user on the interaction and records `sign_in`.
 */
export async function openSession(
  tx: SigninStores,
  ctx: AppContext,
  req: FastifyRequest,
  loaded: LoadedInteraction,
  input: { userId: string; provider: string; seen?: boolean },
): Promise<SignedIn> {
  const { userId } = input;
  const brandId = loaded.client.brandId;
  if (!input.seen) await tx.accounts.touch(userId);
  const authTime = new Date(ctx.clock.nowSec() * 1000);
  const meta = { authTime, ...requestMeta(req) };
  const previous = await requestSession(tx, ctx.clock, req, brandId);
  if (!previous) await destroyRequestSession(tx, req, brandId); // an expired one's row
  const renewed = previous?.userId === userId ? await renewSession(tx, ctx.clock, previous.id, meta) : null;
  const session = renewed ?? (await createSession(tx, ctx.clock, { userId, brandId, ...meta }));
  const fields = { userId, sessionId: session.id, authTime };
  const redirectTo = finishesAtSignIn(loaded, userId)
    ? await finishInSignIn(tx, ctx, loaded, fields)
    : undefined;
  if (!redirectTo) await tx.interactions.attachUser(loaded.row.id, fields);
  await tx.accounts.recordActivity({
    userId,
    type: 'sign_in',
    provider: input.provider,
    ...requestMeta(req),
  });
  const replaced = previous && previous.userId !== userId ? previous.id : null;
  return { userId, session, authTime, replaced, redirectTo };
}

/**
 * After the sign-in commits: the session cookie, then the consent step when it is needed, else the
 * completed interaction's redirect (the client's redirect URI with a code, or the device page).
 */
export async function continueSignedIn(
  ctx: AppContext,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  outcome: SignedIn,
): Promise<{ step: 'consent' } | { step: 'done'; redirectTo: string }> {
  // Another user's session of this browser ends as logout ends it: its tokens revoked, its apps told.
  if (outcome.replaced) await endSessions(ctx, [outcome.replaced]);
  setSessionCookie(ctx, reply, loaded.client.brandId, outcome.session.token);
  if (outcome.redirectTo) return { step: 'done', redirectTo: outcome.redirectTo };
  const { params } = loaded;
  if (params.idTokenHintSub && params.idTokenHintSub !== outcome.userId) {
    // The client asked for the user its id_token_hint names (OIDC Core §3.1.2.1); someone else
    // signed in. The browser keeps its new session, the client learns it is not that user's.
    await ctx.stores.signin.interactions.complete(loaded.row.id, ctx.clock.now());
    const error = 'login_required';
    const description = 'a different user signed in than the id_token_hint names';
    const query = { error, error_description: description, state: params.state, iss: ctx.config.issuer };
    return { step: 'done', redirectTo: withQuery(params.redirectUri, query) };
  }
  const signedIn: LoadedInteraction = {
    ...loaded,
    row: {
      ...loaded.row,
      user_id: outcome.userId,
      session_id: outcome.session.id,
      auth_time: outcome.authTime,
    },
  };
  const unmet = await unmetRequirementRedirect(ctx, signedIn, outcome.userId);
  if (unmet) return { step: 'done', redirectTo: unmet };
  if (await needsConsent(ctx, signedIn)) return { step: 'consent' };
  return { step: 'done', redirectTo: await finish(ctx, signedIn) };
}
