import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * CORS for the public endpoints a web page calls from its own origin with what authorizes the call
 * in the request itself: the token, revocation and userinfo endpoints (a single-page app, a public
 * client, redeems its code with its PKCE verifier and reads the user's claims from the browser) and
 * the bulk token-gate check (a JSON POST, so preflighted). None of them reads a cookie, so letting
 * any origin read the answer gives a page nothing a server could not get; `*` never comes with
 * credentials. Every other route grants no preflight: the interaction routes rely on that
 * (src/oidc/signin/guards.ts: a foreign page cannot send them JSON).
 */

/** What a page may read of these answers besides the CORS-safe headers. */
const EXPOSED = 'WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * A route's `onSend` hook: every answer of the route can be read from any origin, its errors (an
 * OAuth error, a 401, a 429 from a limit spent before the handler) too.
 */
export async function anyOriginMayRead(
  _req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED);
  return payload;
}

/** Answers the browser's preflight for `url`: these methods, with these request headers. */
export function grantPreflight(
  app: FastifyInstance,
  url: string,
  methods: string[],
  headers: string[],
): void {
  app.options(url, async (_req, reply) =>
    reply
      .code(204)
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', methods.join(', '))
      .header('access-control-allow-headers', headers.join(', '))
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE))
      .send(),
  );
}
