import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { safeEqual, sha256 } from '../../lib/hash.js';
import { newSecret } from '../../lib/ids.js';

/**
 * The one place that binds a browser flow to the browser (and user) that started it. Every flow that
 * leaves the service and comes back — an OAuth interaction (sign-in, and the device flow's sign-in),
 * a provider link, the device flow, logout — starts with `startFlow`: a random 256-bit value goes
 * into an HttpOnly cookie named after the flow's row, and the row keeps only its SHA-256. A step that
 * continues the flow calls `flowBrowserMatches` (and for a form, `flowFormMatches` with the CSRF
 * token the page embedded) *before* it consumes anything, so a link, code or page handed to another
 * browser is refused without burning the victim's, or the attacker's, single-use state.
 *
 * The user half of the binding lives in the flow's row: a link's `user_id` (the user whose token
 * started it, the only account it can attach to, named on the confirmation page), an interaction's
 * session (the consent step must come from that session).
 */
export type FlowKind = 'interaction' | 'link' | 'device' | 'logout';

/** Cookie name prefixes; `gh_ia_` predates this helper and stays for interactions in flight. */
const PREFIX: Record<FlowKind, string> = {
  interaction: 'gh_ia_',
  link: 'gh_link_',
  device: 'gh_dev_',
  logout: 'gh_lo_',
};

/** Longest cookie value accepted: ours are 43 characters; anything far longer is not ours. */
const MAX_VALUE = 100;

export function flowCookieName(kind: FlowKind, id: string): string {
  return `${PREFIX[kind]}${id.replace(/[^A-Za-z0-9]/g, '')}`;
}

function cookieOptions(ctx: AppContext, kind: FlowKind) {
  const https = ctx.config.baseUrl.startsWith('https:');
  // On https, SameSite=None so a provider's cross-site form_post return (Apple) still carries it;
  // plain-http development keeps Lax (browsers refuse None without Secure). The device flow never
  // comes back cross-site, so its cookie stays Lax: another site cannot overwrite the kept code.
  return {
    path: '/',
    httpOnly: true,
    secure: https,
    sameSite: https && kind !== 'device' ? ('none' as const) : ('lax' as const),
  };
}

export interface FlowBinding {
  /** What the browser holds (set it with `setFlowCookie` once the row's id is known). */
  value: string;
  /** What the row stores. */
  hash: string;
}

/** A fresh binding: store `hash` in the flow's row, then `setFlowCookie` with `value`. */
export function newFlowBinding(): FlowBinding {
  const value = newSecret();
  return { value, hash: sha256(value) };
}

/**
 * At most this many flows of one kind per browser. Each start sets a cookie that lives as long as
 * its flow (30 minutes for an interaction), so a page that keeps sending a browser to
 * `/oauth2/authorize` would pile them up until the Cookie header passes a proxy's limit (nginx's
 * 8 KB) and every page of the origin answers 400 to that browser. Starting one more clears the
 * oldest: a browser sends the cookies of one path oldest first (RFC 6265 §5.4), and a flow whose
 * cookie is gone ends as one started in another browser.
 */
export const MAX_FLOWS_PER_BROWSER = 10;

export function setFlowCookie(
  ctx: AppContext,
  reply: FastifyReply,
  kind: FlowKind,
  id: string,
  value: string,
  ttlSeconds: number,
): void {
  const name = flowCookieName(kind, id);
  const options = cookieOptions(ctx, kind);
  const held = Object.keys(reply.request.cookies ?? {}).filter(
    (n) => n.startsWith(PREFIX[kind]) && n !== name,
  );
  const over = held.length - (MAX_FLOWS_PER_BROWSER - 1);
  for (const oldest of held.slice(0, Math.max(0, over))) reply.clearCookie(oldest, options);
  reply.setCookie(name, value, { ...options, maxAge: ttlSeconds });
}

/** Starts a flow whose row id is already known: sets the cookie and returns the hash to store. */
export function startFlow(
  ctx: AppContext,
  reply: FastifyReply,
  kind: FlowKind,
  id: string,
  ttlSeconds: number,
): string {
  const binding = newFlowBinding();
  setFlowCookie(ctx, reply, kind, id, binding.value, ttlSeconds);
  return binding.hash;
}

/** The flow is over for this browser (done, cancelled or refused). */
export function endFlow(ctx: AppContext, reply: FastifyReply, kind: FlowKind, id: string): void {
  reply.clearCookie(flowCookieName(kind, id), cookieOptions(ctx, kind));
}

function cookieValue(req: FastifyRequest, kind: FlowKind, id: string): string | undefined {
  const value = req.cookies?.[flowCookieName(kind, id)];
  return value && value.length <= MAX_VALUE ? value : undefined;
}

/**
 * For a flow whose cookie carries the browser's own input rather than a random binding (the device
 * flow keeps the user code the user typed in the browser, so no row has to hold it in plaintext).
 */
export function flowValue(req: FastifyRequest, kind: FlowKind, id: string): string | undefined {
  return cookieValue(req, kind, id);
}

/**
 * Whether the request comes from the browser that started the flow. A row without a binding never
 * matches: every flow is bound from its start.
 */
export function flowBrowserMatches(
  req: FastifyRequest,
  kind: FlowKind,
  id: string,
  bindingHash: string | null | undefined,
): boolean {
  if (!bindingHash) return false;
  const value = cookieValue(req, kind, id);
  return !!value && safeEqual(sha256(value), bindingHash);
}

/**
 * The CSRF token a flow's page embeds in its forms: derived from the browser's flow cookie, so it
 * needs no storage and cannot be computed without the cookie. Null when the browser has none.
 */
export function flowCsrfToken(req: FastifyRequest, kind: FlowKind, id: string): string | null {
  const value = cookieValue(req, kind, id);
  return value ? sha256(`csrf:${kind}:${id}:${value}`) : null;
}

/** A form post continuing the flow: the binding cookie matches and the form carries its CSRF token. */
export function flowFormMatches(
  req: FastifyRequest,
  kind: FlowKind,
  id: string,
  bindingHash: string | null | undefined,
  csrfToken: string | undefined,
): boolean {
  if (!flowBrowserMatches(req, kind, id, bindingHash)) return false;
  const expected = flowCsrfToken(req, kind, id);
  return !!expected && typeof csrfToken === 'string' && safeEqual(csrfToken, expected);
}
