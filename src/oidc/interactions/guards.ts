import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';

/**
 * State-changing interaction and device routes refuse a request whose Origin is present and is not
 * BASE_URL's origin (a page of another site posting on the user's behalf).
 */
export function sameOriginGuard(ctx: AppContext) {
  const expected = new URL(ctx.config.baseUrl).origin;
  return async function sameOrigin(req: FastifyRequest): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== expected) {
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
