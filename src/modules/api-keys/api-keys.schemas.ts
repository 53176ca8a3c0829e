import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { IsoDate, Name } from '../../http/schemas.js';

/** Most scopes and allowlist entries one key may carry. */
export const API_KEY_LIST_MAX = 50;

export const ApiKeyType = Type.Union([Type.Literal('standard'), Type.Literal('ephemeral')]);

export const CreateApiKeyBody = Type.Object(
  {
    name: Name,
    expiresAt: Type.Optional(IsoDate),
    scopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: API_KEY_LIST_MAX,
        uniqueItems: true,
      }),
    ),
    type: Type.Optional(ApiKeyType),
    ipAllowlist: Type.Optional(
      Type.Array(Type.String({ minLength: 2, maxLength: 64 }), {
        maxItems: API_KEY_LIST_MAX,
        uniqueItems: true,
      }),
    ),
  },
  { additionalProperties: false },
);

const keyFields = {
  id: Type.String(),
  name: Type.String({ maxLength: limits.nameMax }),
  prefix: Type.String(),
  type: ApiKeyType,
  scopes: Type.Array(Type.String()),
  expiresAt: Type.Optional(Type.String()),
  ipAllowlist: Type.Array(Type.String()),
  createdAt: Type.String(),
};

/** The create response: the only place the key ever appears. */
export const ApiKeyCreated = Type.Object({ ...keyFields, key: Type.String() });

/** A key as listed and as returned by revoke: never the key. */
export const ApiKeyView = Type.Object({
  ...keyFields,
  lastUsedAt: Type.Optional(Type.String()),
  revokedAt: Type.Optional(Type.String()),
});

export const ApiKeyList = Type.Object({ items: Type.Array(ApiKeyView) });

export const ApiKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
