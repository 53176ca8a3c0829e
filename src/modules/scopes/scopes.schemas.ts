import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { Nullable, PathId } from '../../http/schemas.js';

/** Shown on the consent screen; the interface gives no bound, so the description limit of the house. */
const Description = Type.String({ minLength: 1, maxLength: limits.descriptionMax });

export const ScopeParams = Type.Object({
  orgSlug: PathId,
  brandSlug: PathId,
  name: Type.String({ minLength: 1, maxLength: 100 }),
});

/**
 * DESIGN §3 "Gates in tokens": the scope is granted only while one of the user's linked wallets
 * passes this gate policy of the org (null: not gated).
 */
const GatePolicyId = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      'A gate policy of the org: the scope is granted only while a linked wallet of the user passes it (checked at authorization and at each refresh); null for none',
  }),
);

export const ScopeCreateBody = Type.Object(
  {
    name: Type.String({ pattern: limits.scopeNamePattern }),
    description: Description,
    gatePolicyId: Type.Optional(GatePolicyId),
  },
  { additionalProperties: false },
);

/** `name` is immutable (it appears in token claims): sending it is an unknown field. */
export const ScopePatchBody = Type.Object(
  { description: Type.Optional(Description), gatePolicyId: Type.Optional(GatePolicyId) },
  { additionalProperties: false, minProperties: 1 },
);

export const Scope = Type.Object({
  name: Type.String(),
  description: Type.String(),
  gatePolicyId: Nullable(Type.String()),
  createdAt: Type.String(),
});

export const ScopeList = Type.Object({ items: Type.Array(Scope), total: Type.Integer() });
