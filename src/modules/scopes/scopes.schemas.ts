import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { PathId } from '../../http/schemas.js';

/** Shown on the consent screen; the interface gives no bound, so the description limit of the house. */
const Description = Type.String({ minLength: 1, maxLength: limits.descriptionMax });

export const ScopeParams = Type.Object({
  orgSlug: PathId,
  brandSlug: PathId,
  name: Type.String({ minLength: 1, maxLength: 100 }),
});

export const ScopeCreateBody = Type.Object(
  { name: Type.String({ pattern: limits.scopeNamePattern }), description: Description },
  { additionalProperties: false },
);

/** `name` is immutable (it appears in token claims): sending it is an unknown field. */
export const ScopePatchBody = Type.Object({ description: Description }, { additionalProperties: false });

export const Scope = Type.Object({
  name: Type.String(),
  description: Type.String(),
  createdAt: Type.String(),
});

export const ScopeList = Type.Object({ items: Type.Array(Scope), total: Type.Integer() });
