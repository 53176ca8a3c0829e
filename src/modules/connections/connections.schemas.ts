import { Type } from 'typebox';
import { PROVIDER_TYPES, type ProviderType } from '../../providers/types.js';
import { PathId } from '../../http/schemas.js';

export const ConnectionType = Type.Enum([...PROVIDER_TYPES]);

export const ConnectionParams = Type.Object({
  orgSlug: PathId,
  brandSlug: PathId,
  type: ConnectionType,
});

/** `config` is checked against the type's ProviderConfig in the service (so errors name `config.<field>`). */
export const ConnectionPutBody = Type.Object(
  {
    type: ConnectionType,
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

export const ConnectionEnabledBody = Type.Object(
  { enabled: Type.Boolean() },
  { additionalProperties: false },
);

/** The Connection resource: metadata only, the config never leaves the database. `brand` is the slug. */
export const Connection = Type.Object({
  id: Type.String(),
  brand: Type.String(),
  type: Type.String(),
  enabled: Type.Boolean(),
  callbackUrl: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const ConnectionList = Type.Object({ items: Type.Array(Connection), total: Type.Integer() });

const ClientId = Type.String({ minLength: 1, maxLength: 500 });
const ClientSecret = Type.String({ minLength: 1, maxLength: 2000 });
const UpstreamScopes = Type.Array(Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$' }), {
  uniqueItems: true,
  maxItems: 50,
});
const OAuthConfig = Type.Object(
  { clientId: ClientId, clientSecret: ClientSecret, scopes: Type.Optional(UpstreamScopes) },
  { additionalProperties: false },
);

/**
 * ProviderConfig per type (DESIGN.md §4). Apple's team and key ids are Apple's 10-character ids;
 * its private key is the PEM of the .p8 file (checked to be an EC P-256 key in the service).
 * Telegram's bot token is `<bot id>:<secret>` as BotFather issues it.
 */
export const PROVIDER_CONFIG_SCHEMAS: Record<ProviderType, ReturnType<typeof Type.Object>> = {
  google: OAuthConfig,
  discord: OAuthConfig,
  facebook: OAuthConfig,
  x: OAuthConfig,
  matrica: OAuthConfig,
  microsoft: Type.Object(
    {
      clientId: ClientId,
      clientSecret: ClientSecret,
      scopes: Type.Optional(UpstreamScopes),
      tenant: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9.-]{1,100}$' })),
    },
    { additionalProperties: false },
  ),
  apple: Type.Object(
    {
      clientId: ClientId,
      teamId: Type.String({ pattern: '^[A-Z0-9]{10}$' }),
      keyId: Type.String({ pattern: '^[A-Z0-9]{10}$' }),
      privateKey: Type.String({ minLength: 1, maxLength: 10000 }),
    },
    { additionalProperties: false },
  ),
  telegram: Type.Object(
    {
      botToken: Type.String({ pattern: '^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$' }),
      botUsername: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{1,28}[Bb][Oo][Tt]$' }),
    },
    { additionalProperties: false },
  ),
};
