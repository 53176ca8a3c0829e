import type { TSchema } from 'typebox';
import type { RateLimitName } from '../config/defaults.js';

/**
 * What a guard (a preHandler) requires, attached to the guard function itself so the OpenAPI
 * document states a route's credentials, permission and rate limit from the code that enforces
 * them, never from a second hand-written list.
 */
export type GuardDoc =
  /** `authenticate`: a console access token or a user API key. */
  | { kind: 'bearer' }
  /** `requireAccessToken`: a console access token only (no API key). */
  | { kind: 'accessTokenOnly' }
  /** An org permission; on the admin mirror, `admin.orgs.view`/`admin.orgs.edit` instead. */
  | { kind: 'orgPermission'; permission: string; admin: boolean }
  | { kind: 'systemPermission'; permission: string }
  /** A scope a scoped API key needs for this route. */
  | { kind: 'keyScope'; scope: string }
  | { kind: 'rateLimit'; name: string; points: number; duration: number };

const GUARD_DOC = Symbol.for('gatehouse.guardDoc');

/** Marks `guard` with what it requires; returns it unchanged. */
export function documentGuard<F extends object>(guard: F, doc: GuardDoc): F {
  Object.defineProperty(guard, GUARD_DOC, { value: doc, enumerable: false });
  return guard;
}

/** The requirements of a route's preHandlers, in order. */
export function guardDocs(preHandler: unknown): GuardDoc[] {
  const list = Array.isArray(preHandler) ? preHandler : preHandler ? [preHandler] : [];
  return list.flatMap((fn) => {
    const doc = (fn as { [GUARD_DOC]?: GuardDoc })[GUARD_DOC];
    return doc ? [doc] : [];
  });
}

/** How an operation authenticates when its preHandlers do not say (checks made in the handler). */
export type DocAuth = 'none' | 'client' | 'accessToken' | 'bearer';

export interface RouteDocFields {
  /** Unique across the API; metrics label requests by it. */
  operationId: string;
  summary: string;
  tags: string[];
  /** The interface's rules the guards cannot state (what the operation does, its specific errors). */
  description?: string;
  /** Only for credentials checked inside the handler; otherwise derived from the preHandlers. */
  auth?: DocAuth;
  /** Rate limits consumed inside the handler (the preHandler ones are derived). */
  rateLimits?: RateLimitName[];
  /** Request media types when not JSON (form posts, uploads). */
  consumes?: string[];
  /** The request body as documented when Fastify does not parse it (multipart uploads). */
  docBody?: TSchema;
  /** The query as documented when the route parses its raw query itself. */
  docQuery?: TSchema;
}

declare module 'fastify' {
  interface FastifySchema extends Partial<RouteDocFields> {
    /** A hosted HTML page, left out of the OpenAPI document (DESIGN.md §3). */
    hide?: boolean;
  }
}

/**
 * The documentation fields of a module's routes, spread into each route's `schema`:
 * `const doc = routeDoc('Apps')` then `schema: { ...doc('createApp', 'Create an app'), ... }`.
 */
export function routeDoc(tag: string) {
  return (
    operationId: string,
    summary: string,
    extra: Omit<RouteDocFields, 'operationId' | 'summary' | 'tags'> = {},
  ): RouteDocFields => ({ operationId, summary, tags: [tag], ...extra });
}
