import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Clock } from '../../lib/clock.js';
import { sha256 } from '../../lib/hash.js';
import { newId, newSecret } from '../../lib/ids.js';
import type { SigninStores, StoredSession, UserlessSession } from './stores.js';

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
  const now = ctx.clock.now();
  const row = await ctx.stores.signin.sessions.findLive(sha256(token), brandId, now);
  if (!row) return null;
  await ctx.stores.signin.sessions.touch(row.id, now, defaults.sessionSeenGranularity);
  return { ...row, authTime: Math.floor(row.authTime.getTime() / 1000), token };
}

interface SessionInput {
  userId: string;
  brandId: string;
  authTime: Date;
  userAgent?: string;
  ip?: string;
}

/** Starts a session; returns its id and the cookie value (shown to nobody but the browser). */
export async function createSession(
  stores: SigninStores,
  clock: Clock,
  input: SessionInput,
): Promise<{ id: string; token: string }> {
  const { id, token, row } = newSession(clock, input);
  await stores.sessions.insert({ ...row, userId: input.userId });
  return { id, token };
}

/**
 * A new session's id, cookie value and row, for the caller to insert with its user (createSession,
 * finishSignIn) or to have the statement that finds the user insert (signInWithWallet).
 */
export function newSession(
  clock: Clock,
  input: Omit<SessionInput, 'userId'>,
): { id: string; token: string; row: UserlessSession } {
  const token = newSecret();
  const now = clock.now();
  const id = newId('ses_');
  const row: UserlessSession = {
    id,
    tokenHash: sha256(token),
    brandId: input.brandId,
    authTime: input.authTime,
    createdAt: now,
    expiresAt: new Date(now.getTime() + defaults.sessionTtl * 1000),
    // Shown to the user in their session list; bounded so a header cannot bloat the row.
    userAgent: input.userAgent?.slice(0, 300) ?? null,
    ip: input.ip ?? null,
  };
  return { id, token, row };
}

/** Whether the request brings a session cookie of the brand (live or not: it would be replaced). */
export function hasSessionCookie(req: FastifyRequest, brandId: string): boolean {
  return req.cookies?.[sessionCookieName(brandId)] !== undefined;
}

/** The live session of `brandId` that the request's cookie names, read on the caller's stores. */
export function requestSession(
  stores: SigninStores,
  clock: Clock,
  req: FastifyRequest,
  brandId: string,
): Promise<StoredSession | null> {
  const token = req.cookies?.[sessionCookieName(brandId)];
  if (!token || token.length > 100) return Promise.resolve(null);
  return stores.sessions.findLive(sha256(token), brandId, clock.now());
}

/**
 * The same user signed in again: the session keeps its id, with a fresh cookie (returned), auth
 * time and lifetime (`sessionTtl` from now, as the cookie's); null when it ended meanwhile (a logout
 * in another tab).
 */
export async function renewSession(
  stores: SigninStores,
  clock: Clock,
  id: string,
  input: { authTime: Date; userAgent?: string; ip?: string },
): Promise<{ id: string; token: string } | null> {
  const token = newSecret();
  const renewed = await stores.sessions.renew(id, {
    tokenHash: sha256(token),
    authTime: input.authTime,
    now: clock.now(),
    expiresAt: new Date(clock.now().getTime() + defaults.sessionTtl * 1000),
    userAgent: input.userAgent?.slice(0, 300) ?? null,
    ip: input.ip ?? null,
  });
  return renewed ? { id, token } : null;
}

/** Ends the session the request's cookie names for `brandId`, if any (a new sign-in replaces it). */
export async function destroyRequestSession(
  stores: SigninStores,
  req: FastifyRequest,
  brandId: string,
): Promise<void> {
  const token = req.cookies?.[sessionCookieName(brandId)];
  if (!token || token.length > 100) return;
  await stores.sessions.deleteByToken(sha256(token), brandId);
}

const SESSION_COOKIE = /^gh_session_([A-Za-z0-9_]{1,100})$/;

/**
 * The session cookies the request brought, one per brand, at most `defaults.maxSessionCookies`:
 * only well-formed names and values count.
 */
export function requestSessionCookies(req: FastifyRequest): { brandId: string; token: string }[] {
  const found: { brandId: string; token: string }[] = [];
  for (const [name, value] of Object.entries(req.cookies ?? {})) {
    const brandId = SESSION_COOKIE.exec(name)?.[1];
    if (!brandId || typeof value !== 'string' || !value || value.length > 100) continue;
    found.push({ brandId, token: value });
    if (found.length === defaults.maxSessionCookies) break;
  }
  return found;
}

/** The SHA-256 of every session cookie the request brought (any brand): marks the caller's sessions. */
export function requestSessionHashes(req: FastifyRequest): string[] {
  return requestSessionCookies(req).map((c) => sha256(c.token));
}

/** Clears the browser's cookie of a brand's session (the session itself is ended elsewhere). */
export function clearSessionCookie(ctx: AppContext, reply: FastifyReply, brandId: string): void {
  reply.clearCookie(sessionCookieName(brandId), {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.baseUrl.startsWith('https:'),
  });
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
