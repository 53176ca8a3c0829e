import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';

/**
 * State-changing interaction and device routes refuse a request another site sent: an `Origin`
 * that is present and not BASE_URL's origin, or a browser's `Sec-Fetch-Site` of `cross-site` /
 * `same-site`. `Origin: null` (an opaque origin: a privacy setting, a `no-referrer` policy) proves
 * nothing either way, so it is treated like an absent Origin: the routes then accept only what a
 * foreign page cannot send — a JSON body (a CORS preflight we never grant) or the page's form with
 * the session's CSRF token — which `requireJson` and the device routes check.
 */
export function sameOriginGuard(ctx: AppContext) {
  const expected = new URL(ctx.config.baseUrl).origin;
  return async function sameOrigin(req: FastifyRequest): Promise<void> {
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    const foreignOrigin = origin !== undefined && origin !== 'null' && origin !== expected;
    if (foreignOrigin || site === 'cross-site' || site === 'same-site') {
      throw new ApiError(403, 'forbidden', 'cross-origin requests are refused here', {
        missing: ['same-origin'],
      });
    }
  };
}

export function isJson(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && /^application\/json\s*(;|$)/i.test(type);
}

export function isForm(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
}

/** A cross-site form cannot send application/json without a CORS preflight, which we never grant. */
export async function requireJson(req: FastifyRequest): Promise<void> {
  if (!isJson(req)) throw new ApiError(415, 'unsupported_media_type', 'send the body as application/json');
}

/** Whether the caller asked for JSON rather than a page. */
export function wantsJson(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept);
}
