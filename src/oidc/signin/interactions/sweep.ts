import type { AppContext } from '../../../context.js';
import { pruneWalletChallenges } from '../../../solana/siws.js';
import { pruneSessions } from '../sessions.js';
import { deleteExpiredInteractions } from './interactions.queries.js';

/** Deletes expired wallet challenges, interactions and sessions: none of them can be used again. */
export async function sweepExpiredSignin(
  ctx: AppContext,
): Promise<{ challenges: number; interactions: number; sessions: number }> {
  const now = ctx.clock.now();
  return {
    challenges: await pruneWalletChallenges(ctx),
    interactions: await deleteExpiredInteractions(ctx.db, now),
    sessions: await pruneSessions(ctx.db, ctx.clock),
  };
}
