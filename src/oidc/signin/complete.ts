import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { finish, type LoadedInteraction, needsConsent } from './interactions.js';
import { createSession, destroyRequestSession, setSessionCookie } from './sessions.js';
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
}

/**
 * In the sign-in's transaction, once the account is known: marks it seen, replaces the browser's
 * session of the brand with a fresh one, puts the user on the interaction and records `sign_in`.
 */
export async function openSession(
  tx: SigninStores,
  ctx: AppContext,
  req: FastifyRequest,
  loaded: LoadedInteraction,
  input: { userId: string; provider: string },
): Promise<SignedIn> {
  const { userId } = input;
  const brandId = loaded.client.brandId;
  await tx.accounts.touch(userId);
  await destroyRequestSession(tx, req, brandId);
  const authTime = new Date(ctx.clock.nowSec() * 1000);
  const session = await createSession(tx, ctx.clock, { userId, brandId, authTime });
  await tx.interactions.attachUser(loaded.row.id, { userId, sessionId: session.id, authTime });
  await tx.accounts.recordActivity({
    userId,
    type: 'sign_in',
    provider: input.provider,
    ...requestMeta(req),
  });
  return { userId, session, authTime };
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
  setSessionCookie(ctx, reply, loaded.client.brandId, outcome.session.token);
  const signedIn: LoadedInteraction = {
    ...loaded,
    row: {
      ...loaded.row,
      user_id: outcome.userId,
      session_id: outcome.session.id,
      auth_time: outcome.authTime,
    },
  };
  if (await needsConsent(ctx, signedIn)) return { step: 'consent' };
  return { step: 'done', redirectTo: await finish(ctx, signedIn) };
}
