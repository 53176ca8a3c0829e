import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { safeEqual, sha256 } from '../../lib/hash.js';
import { newSecret } from '../../lib/ids.js';
import type { InteractionRow } from './tables.js';

/**
 * Binds an interaction to the browser that started it (against login CSRF): a random 256-bit value
 * in a cookie named after the interaction, so concurrent interactions in one browser each keep
 * theirs; the row holds only its SHA-256. Completions by top-level navigation from a provider
 * (the provider callback) must carry it.
 */
export function bindingCookieName(interactionId: string): string {
  return `gh_ia_${interactionId.replace(/[^A-Za-z0-9]/g, '')}`;
}

export function newBinding(): { value: string; hash: string } {
  const value = newSecret();
  return { value, hash: sha256(value) };
}

function cookieOptions(ctx: AppContext) {
  const https = ctx.config.baseUrl.startsWith('https:');
  // On https, SameSite=None so Apple's cross-site form_post still carries it.
  return {
    path: '/',
    httpOnly: true,
    secure: https,
    sameSite: https ? ('none' as const) : ('lax' as const),
  };
}

export function setBindingCookie(
  ctx: AppContext,
  reply: FastifyReply,
  interactionId: string,
  value: string,
): void {
  reply.setCookie(bindingCookieName(interactionId), value, {
    ...cookieOptions(ctx),
    maxAge: defaults.interactionTtl,
  });
}

export function clearBindingCookie(ctx: AppContext, reply: FastifyReply, interactionId: string): void {
  reply.clearCookie(bindingCookieName(interactionId), cookieOptions(ctx));
}

/** True when the row is unbound, or the request carries the matching cookie. */
export function browserMatches(req: FastifyRequest, row: InteractionRow): boolean {
  if (!row.binding_hash) return true;
  const value = req.cookies?.[bindingCookieName(row.id)];
  if (!value || value.length > 100) return false;
  return safeEqual(sha256(value), row.binding_hash);
}
