import { type TSchema, Type } from 'typebox';
import { limits } from '../config/defaults.js';

/** The REST error envelope, for the response schema of every error status a route declares. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const OAuthErrorBody = Type.Object({
  error: Type.String(),
  error_description: Type.Optional(Type.String()),
});

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Standard error responses for a route, merged with its success schemas. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorEnvelope> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));
}

/** Errors every authenticated route can answer. */
export const authErrors = errorResponses(400, 401, 403, 404, 429);

export const Slug = Type.String({ pattern: limits.slugPattern });
/** A path segment naming a resource (slug, id, client id): bounded, otherwise free (unknown → 404). */
export const PathId = Type.String({ minLength: 1, maxLength: 100 });
/** `:orgSlug`, the path parameters of every route on an org itself (others add their own ids). */
export const OrgParams = Type.Object({ orgSlug: PathId });
export const Name = Type.String({ minLength: 1, maxLength: limits.nameMax });
export const IsoDate = Type.String({ format: 'date-time' });

export const FileTracker = Type.Object({
  fileKey: Type.String(),
  url: Type.String(),
  contentType: Type.String(),
  bytes: Type.Number(),
});

export const Pagination = (max: number, def: number) =>
  Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: max, default: def }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  });

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), total: Type.Integer() });
