import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { sha256 } from '../../lib/hash.js';
import { newId, newSecret } from '../../lib/ids.js';
import type { SessionRow } from '../../db/schema.js';

/**
 * Browser sessions, one per brand: a session of brand A never signs anyone in to brand B. The
 * cookie holds a random 256-bit value; the database holds only its SHA-256, so a database leak
 * yields no usable cookie and any instance can answer.
 */
export function sessionCookieName(brandId: string): string {
  return `gh_session_${brandId.replace(/[^A-Za-z0-9_]/g, '')}`;
}

export interface ActiveSession {
  id: string;
  userId: string;
  brandId: string;
  /** Unix seconds. */
  authTime: number;
  /** The cookie value, needed to derive the page's CSRF token. */
  token: string;
}

/** The live session of `brandId` that the request's cookie names, whose user is not deleted. */
export async function findSession(
  ctx: AppContext,
  req: FastifyRequest,
  brandId: string,
): Promise<ActiveSession | null> {
  const token = req.cookies?.[sessionCookieName(brandId)];
  if (!token || token.length > 100) return null;
  const row = await ctx.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['sessions.id', 'sessions.user_id', 'sessions.brand_id', 'sessions.auth_time'])
    .where('sessions.token_hash', '=', sha256(token))
    .where('sessions.brand_id', '=', brandId)
    .where('sessions.expires_at', '>', ctx.clock.now())
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    userId: row.user_id,
    brandId: row.brand_id,
    authTime: Math.floor(row.auth_time.getTime() / 1000),
    token,
  };
}

/** Starts a session; returns its id and the cookie value (shown to nobody but the browser). */
export async function createSession(
  db: Executor,
  clock: Clock,
  input: { userId: string; brandId: string; authTime: Date },
): Promise<{ id: string; token: string; row: SessionRow }> {
  const token = newSecret();
  const now = clock.now();
  const row = await db
    .insertInto('sessions')
    .values({
      id: newId('ses_'),
      token_hash: sha256(token),
      user_id: input.userId,
      brand_id: input.brandId,
      auth_time: input.authTime,
      created_at: now,
      expires_at: new Date(now.getTime() + defaults.sessionTtl * 1000),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { id: row.id, token, row };
}

/** Ends the session the request's cookie names for `brandId`, if any (a new sign-in replaces it). */
export async function destroyRequestSession(
  db: Executor,
  req: FastifyRequest,
  brandId: string,
): Promise<void> {
  const token = req.cookies?.[sessionCookieName(brandId)];
  if (!token || token.length > 100) return;
  await db
    .deleteFrom('sessions')
    .where('token_hash', '=', sha256(token))
    .where('brand_id', '=', brandId)
    .execute();
}

/** Every session of the user, on every brand (account deletion). */
export async function destroyUserSessions(trx: Executor, userId: string): Promise<number> {
  const res = await trx.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

/** HttpOnly, SameSite=Lax, Secure when BASE_URL is https, for the session's lifetime. */
export function setSessionCookie(ctx: AppContext, reply: FastifyReply, brandId: string, token: string): void {
  reply.setCookie(sessionCookieName(brandId), token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.baseUrl.startsWith('https:'),
    maxAge: defaults.sessionTtl,
  });
}

/**
 * The CSRF token the session's pages embed in their forms: derived from the cookie value, so it
 * needs no storage, changes with every sign-in and cannot be computed without the cookie.
 */
export function csrfTokenFor(session: ActiveSession): string {
  return sha256(`csrf:${session.token}`);
}

/** Deletes sessions past their expiry. */
export async function pruneSessions(db: Executor, clock: Clock): Promise<number> {
  const res = await db.deleteFrom('sessions').where('expires_at', '<', clock.now()).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
