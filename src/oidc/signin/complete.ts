import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { sha256 } from '../../lib/hash.js';
import { WALLET_PROVIDER } from '../../providers/types.js';
import { decodeWalletProof, walletSigned } from '../../solana/siws.js';
import { newUserlessCode, type UserlessCodeRow } from '../codes.js';
import { InteractionGone } from './errors.js';
import { finish, type LoadedInteraction, needsConsent, withQuery } from './interactions.js';
import { unmetRequirementRedirect } from './requirement.js';
import { endSessions } from './logout.js';
import {
  createSession,
  destroyRequestSession,
  hasSessionCookie,
  newSession,
  renewSession,
  requestSession,
  setSessionCookie,
} from './sessions.js';
import type { AccountActivity, SigninStores } from './stores.js';

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
function finishesAtSignIn(loaded: LoadedInteraction, userId: string | undefined): boolean {
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
  fields: SignedInFields,
): Promise<string> {
  if (!(await tx.interactions.completeSignedIn(loaded.row.id, fields, ctx.clock.now())))
    throw new InteractionGone();
  const { row, redirectTo } = signedInCode(ctx, loaded, fields);
  await tx.codes.insert({ ...row, user_id: fields.userId });
  return redirectTo;
}

type SignedInFields = { userId: string; sessionId: string; authTime: Date };

/**
 * The code the completed interaction redirects with, and the row that keeps its hash (its user is
 * the caller's to add, or the statement's that finds the user).
 */
function signedInCode(
  ctx: AppContext,
  loaded: LoadedInteraction,
  fields: { sessionId: string; authTime: Date },
): { row: UserlessCodeRow; redirectTo: string } {
  const { params, client } = loaded;
  const { code, row } = newUserlessCode(ctx, {
    client,
    redirectUri: params.redirectUri,
    scopes: params.scopes,
    nonce: params.nonce,
    codeChallenge: params.codeChallenge,
    authTime: Math.floor(fields.authTime.getTime() / 1000),
    sessionId: fields.sessionId,
  });
  return {
    row,
    redirectTo: withQuery(params.redirectUri, { code, state: params.state, iss: ctx.config.issuer }),
  };
}

/** The session and code of a sign-in that needs no further step, before its user is known. */
function finishedSignIn(ctx: AppContext, loaded: LoadedInteraction, browser: RequestMeta) {
  const authTime = new Date(ctx.clock.nowSec() * 1000);
  const session = newSession(ctx.clock, { brandId: loaded.client.brandId, authTime, ...browser });
  const { row: code, redirectTo } = signedInCode(ctx, loaded, { sessionId: session.id, authTime });
  return { authTime, session, code, redirectTo };
}

/**
 * A fresh session for a sign-in that needs no further step: the session, the completed interaction,
 * the code and the history's row written by one statement (`finishSignIn`). An interaction that
 * ended meanwhile undoes the whole sign-in, as in finishInSignIn.
 */
async function openFinishedSession(
  tx: SigninStores,
  ctx: AppContext,
  loaded: LoadedInteraction,
  input: { userId: string; activity: AccountActivity; browser: RequestMeta },
): Promise<{ session: { id: string; token: string }; redirectTo: string; authTime: Date }> {
  const { userId } = input;
  const { authTime, session, code, redirectTo } = finishedSignIn(ctx, loaded, input.browser);
  const finished = await tx.finishSignIn({
    session: { ...session.row, userId },
    interactionId: loaded.row.id,
    code: { ...code, user_id: userId },
    activity: input.activity,
    now: ctx.clock.now(),
  });
  if (!finished) throw new InteractionGone();
  return { session: { id: session.id, token: session.token }, redirectTo, authTime };
}

/**
 * A returning wallet's whole sign-in in one statement, no transaction (`signInWithWallet`): when the
 * proof is good, the challenge consumed only while the interaction is live, and when a live account
 * holds the wallet, in the same statement its wallet and user marked, the interaction completed with
 * it, the session opened, the code stored and `sign_in` recorded. Only for a sign-in that needs no
 * further step and replaces no session of this browser (`finishesAlone`). Null when nothing was
 * consumed (the caller takes the step-by-step path); the address when the challenge was consumed
 * but no live account holds the wallet (a new one: the caller makes the account, in a transaction).
 */
export async function signInWithWalletAtOnce(
  ctx: AppContext,
  req: FastifyRequest,
  loaded: LoadedInteraction,
  proof: { address: string; signature: string; signedMessage: string },
): Promise<SignedIn | { address: string; owner: null } | null> {
  const decoded = decodedProof(proof);
  if (!decoded || !(await walletSigned(proof.address, decoded.signed, decoded.signature))) return null;
  const { signed } = decoded;
  const browser = requestMeta(req);
  const { authTime, session, code, redirectTo } = finishedSignIn(ctx, loaded, browser);
  const result = await ctx.stores.signin.signInWithWallet({
    messageHash: sha256(signed),
    brandId: loaded.client.brandId,
    address: proof.address,
    interactionId: loaded.row.id,
    session: session.row,
    code,
    activity: { type: 'sign_in', provider: WALLET_PROVIDER, ...browser },
    now: ctx.clock.now(),
  });
  if (!result) return null;
  if (!result.ownerId) return { address: proof.address, owner: null };
  // The interaction ended after the challenge was consumed: the flow is abandoned.
  if (!result.finished) throw new InteractionGone();
  const signedIn = { id: session.id, token: session.token };
  return { userId: result.ownerId, session: signedIn, authTime, replaced: null, redirectTo };
}

/** The proof's bytes, or null when malformed (the step-by-step path names that error and counts it). */
function decodedProof(proof: { address: string; signature: string; signedMessage: string }) {
  try {
    return decodeWalletProof(proof);
  } catch {
    return null;
  }
}

/** Whether a sign-in can be written by one statement: it needs no further step, replaces no session. */
export function finishesAlone(req: FastifyRequest, loaded: LoadedInteraction): boolean {
  return finishesAtSignIn(loaded, undefined) && !hasSessionCookie(req, loaded.client.brandId);
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
  const browser = requestMeta(req);
  const meta = { authTime, ...browser };
  const activity: AccountActivity = { userId, type: 'sign_in', provider: input.provider, ...browser };
  const previous = await requestSession(tx, ctx.clock, req, brandId);
  if (!previous) await destroyRequestSession(tx, req, brandId); // an expired one's row
  const replaced = previous && previous.userId !== userId ? previous.id : null;
  const renewed = previous?.userId === userId ? await renewSession(tx, ctx.clock, previous.id, meta) : null;
  if (!renewed && finishesAtSignIn(loaded, userId)) {
    const finished = await openFinishedSession(tx, ctx, loaded, { userId, activity, browser });
    return { userId, replaced, ...finished };
  }
  const session = renewed ?? (await createSession(tx, ctx.clock, { userId, brandId, ...meta }));
  const fields = { userId, sessionId: session.id, authTime };
  const redirectTo = finishesAtSignIn(loaded, userId)
    ? await finishInSignIn(tx, ctx, loaded, fields)
    : undefined;
  if (!redirectTo && !(await tx.interactions.attachUser(loaded.row.id, fields, ctx.clock.now())))
    throw new InteractionGone();
  await tx.accounts.recordActivity(activity);
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
