import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { attachUser } from '../interactions/interactions.queries.js';
import { finish, type LoadedInteraction, needsConsent } from '../interactions/interactions.service.js';
import { createSession, destroyRequestSession, setSessionCookie } from '../sessions.js';
import { recordActivity } from '../../../modules/users/activity.js';
import { touchUser } from '../../../modules/users/users.service.js';
import { linkedUser, type RequestMeta, userForIdentity } from './accounts.js';
import type { ExternalIdentity, ProviderTokens } from '../../../providers/provider.js';

export function requestMeta(req: FastifyRequest): RequestMeta {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, ...(typeof ua === 'string' && ua ? { userAgent: ua } : {}) };
}

/**
 * Continues the interaction as the wallet step does: the account (found, restored or created), a
 * fresh session of the brand replacing the browser's previous one, the `sign_in` activity; then the
 * consent step (the hosted page) or the client's redirect URI with a code. Returns where to go.
 */
export async function completeProviderSignIn(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  input: { provider: string; identity: ExternalIdentity; tokens?: ProviderTokens },
): Promise<string> {
  const { row, client } = loaded;
  const meta = requestMeta(req);
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const { userId } = await userForIdentity(ctx, trx, { ...input, brandId: client.brandId });
    await touchUser(trx, ctx.clock, userId);
    await destroyRequestSession(trx, req, client.brandId);
    const authTime = new Date(ctx.clock.nowSec() * 1000);
    const session = await createSession(trx, ctx.clock, { userId, brandId: client.brandId, authTime });
    await attachUser(trx, row.id, { userId, sessionId: session.id, authTime });
    await recordActivity(trx, ctx.clock, { userId, type: 'sign_in', provider: input.provider, ...meta });
    return { userId, session, authTime };
  });
  ctx.metrics.signIn(input.provider, 'succeeded');
  setSessionCookie(ctx, reply, client.brandId, outcome.session.token);
  const signedIn: LoadedInteraction = {
    ...loaded,
    row: { ...row, user_id: outcome.userId, session_id: outcome.session.id, auth_time: outcome.authTime },
  };
  if (await needsConsent(ctx, signedIn)) return `${ctx.config.baseUrl}/signin/${encodeURIComponent(row.id)}`;
  return finish(ctx, signedIn);
}

/**
 * A failed sign-in goes in the history of the account it concerned, when one is known: the user the
 * trip was for (linking), the account the provider named, or the user already on the interaction.
 * The activity table needs a user, so an attempt by nobody known leaves no row.
 */
export async function recordFailedSignIn(
  ctx: AppContext,
  req: FastifyRequest,
  input: { provider: string; userId?: string | null; claimedExternalId?: string },
): Promise<void> {
  let userId = input.userId ?? null;
  if (!userId && input.claimedExternalId)
    userId = await linkedUser(ctx.db, input.provider, input.claimedExternalId);
  if (!userId) return;
  await recordActivity(ctx.db, ctx.clock, {
    userId,
    type: 'sign_in_failed',
    provider: input.provider,
    ...requestMeta(req),
  });
}
