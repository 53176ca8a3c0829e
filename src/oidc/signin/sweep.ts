import type { AppContext } from '../../context.js';

/** Deletes expired wallet challenges, interactions and sessions: none of them can be used again. */
export async function sweepExpiredSignin(
  ctx: AppContext,
): Promise<{ challenges: number; interactions: number; sessions: number }> {
  const now = ctx.clock.now();
  const stores = ctx.stores.signin;
  return {
    challenges: await stores.walletChallenges.deleteExpired(now),
    interactions: await stores.interactions.deleteExpired(now),
    sessions: await stores.sessions.deleteExpired(now),
  };
}

/** Deletes expired provider states (sign-in and link trips to upstream providers). */
export function sweepExpiredProviderStates(ctx: AppContext): Promise<number> {
  return ctx.stores.signin.providerStates.deleteExpired(ctx.clock.now());
}
