import type { Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { endSessions } from '../../oidc/signin/logout.js';
import type { UserSession } from './users.schemas.js';

/** Every live session of the user across brands, newest first; `currentHashes` mark the caller's. */
export async function listSessions(
  ctx: AppContext,
  userId: string,
  currentHashes: string[],
): Promise<Array<Static<typeof UserSession>>> {
  const rows = await ctx.stores.signin.sessions.listOfUser(userId, ctx.clock.now(), currentHashes);
  return rows.map((s) => ({
    id: s.id,
    brand: s.brandSlug,
    createdAt: s.createdAt.toISOString(),
    lastSeenAt: s.lastSeenAt.toISOString(),
    ...(s.userAgent ? { userAgent: s.userAgent } : {}),
    ...(s.ip ? { ip: s.ip } : {}),
    current: s.current,
  }));
}

/**
 * Ends one of the user's sessions as logout does (tokens issued in it revoked, back-channel logout
 * tokens queued). Another user's session, or one already gone, is 404.
 */
export async function endUserSession(ctx: AppContext, userId: string, sessionId: string): Promise<void> {
  const session = await ctx.stores.signin.sessions.find(sessionId);
  if (!session || session.userId !== userId) throw notFound('session');
  const ended = await endSessions(ctx, [session.id]);
  if (ended.length === 0) throw notFound('session');
}
