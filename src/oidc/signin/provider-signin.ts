import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { ExternalIdentity, ProviderTokens } from '../../providers/provider.js';
import { continueSignedIn, openSession, requestMeta } from './complete.js';
import type { LoadedInteraction } from './interactions.js';
import { userForIdentity } from './provider-accounts.js';

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
  const brandId = loaded.client.brandId;
  const outcome = await ctx.stores.signin.atomic(async (tx) => {
    const { userId } = await userForIdentity(tx, { ...input, brandId });
    return openSession(tx, ctx, req, loaded, { userId, provider: input.provider });
  });
  ctx.metrics.signIn(input.provider, 'succeeded');
  const next = await continueSignedIn(ctx, reply, loaded, outcome);
  return next.step === 'consent'
    ? `${ctx.config.baseUrl}/signin/${encodeURIComponent(loaded.row.id)}`
    : next.redirectTo;
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
  const accounts = ctx.stores.signin.accounts;
  let userId = input.userId ?? null;
  if (!userId && input.claimedExternalId)
    userId = await accounts.linkedUser(input.provider, input.claimedExternalId);
  if (!userId) return;
  await accounts.recordActivity({
    userId,
    type: 'sign_in_failed',
    provider: input.provider,
    ...requestMeta(req),
  });
}
