import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { Nullable } from '../../http/schemas.js';
import { UserPublicKeySchema, UserSchema } from './user.presenter.js';

export { UserPublicKeySchema, UserSchema };

export const UserIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * PATCH /users/:id. Types only: the field rules (lengths after trimming, username format, language
 * code, phone digits, file id) are checked by the service, which answers 422 `validation_failed`
 * as the interface asks for this route. `null` clears a field.
 */
export const UpdateUserBody = Type.Object(
  {
    firstName: Type.Optional(Nullable(Type.String())),
    lastName: Type.Optional(Nullable(Type.String())),
    username: Type.Optional(Type.String()),
    profilePicture: Type.Optional(Nullable(Type.String())),
    phoneNumber: Type.Optional(
      Nullable(
        Type.Object({ countryCode: Type.String(), number: Type.String() }, { additionalProperties: false }),
      ),
    ),
    preferredLanguage: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);

export const UsernameAvailabilityBody = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export const UsernameAvailability = Type.Object({ available: Type.Boolean() });

export const ActivityItem = Type.Object({
  timestamp: Type.String(),
  type: Type.Union([
    Type.Literal('sign_in'),
    Type.Literal('sign_in_failed'),
    Type.Literal('link_provider'),
    Type.Literal('unlink_provider'),
    Type.Literal('device_authorized'),
  ]),
  provider: Type.Optional(Type.String()),
  ip: Type.Optional(Type.String()),
  userAgent: Type.Optional(Type.String()),
});
export const ActivityList = Type.Object({ items: Type.Array(ActivityItem) });

export const OAuthProvider = Type.Object({
  type: Type.Literal('oauth'),
  id: Type.String(),
  provider: Type.String(),
  externalUserId: Type.Optional(Type.String()),
  emailAddress: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
});
export const PublicKeyProvider = Type.Object({
  type: Type.Literal('publicKey'),
  id: Type.String(),
  blockchain: Type.Literal('solana'),
  address: Type.String(),
  label: Type.Optional(Type.String()),
  isPrimary: Type.Boolean(),
  lastUsedAt: Type.Optional(Type.String()),
});
export const AuthenticationProviders = Type.Array(Type.Union([OAuthProvider, PublicKeyProvider]));

/** A linked OAuth token record: never the tokens themselves. */
export const OAuthTokenRecord = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  emailAddress: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  lastUsedAt: Type.Optional(Type.String()),
  createdAt: Type.String(),
});
export const OAuthTokenRecords = Type.Array(OAuthTokenRecord);

const Base64 = Type.String({ minLength: 4, maxLength: 4096 });
const Address = Type.String({ minLength: 1, maxLength: 64 });

export const WalletChallengeBody = Type.Object({ address: Address }, { additionalProperties: false });
export const WalletChallenge = Type.Object({ message: Type.String(), expiresAt: Type.String() });

export const LinkWalletBody = Type.Object(
  {
    blockchain: Type.Literal('solana'),
    address: Address,
    signature: Base64,
    signedMessage: Base64,
    label: Type.Optional(Type.String({ minLength: 1, maxLength: limits.nameMax })),
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateWalletBody = Type.Object(
  {
    label: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: limits.nameMax }))),
    isPrimary: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RemoveWalletBody = Type.Object(
  { signature: Base64, signedMessage: Base64, force: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const PublicKeys = Type.Array(UserPublicKeySchema);

export const FindByIdentifierBody = Type.Object(
  { identifier: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const FindByWalletsBody = Type.Object(
  {
    addresses: Type.Array(Address, { minItems: 1, maxItems: limits.findByWalletsMax }),
  },
  { additionalProperties: false },
);
export const FindByWalletsResult = Type.Object({
  results: Type.Array(Type.Object({ address: Type.String(), user: Nullable(UserSchema) })),
});
export const MaybeUser = Nullable(UserSchema);

/** The consent grant record of DESIGN.md §4. */
export const ConsentGrant = Type.Object({
  id: Type.String(),
  user: Type.String(),
  app: Type.String(),
  scopes: Type.Array(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const ConsentGrants = Type.Object({ items: Type.Array(ConsentGrant) });
/** A browser session of the user (DESIGN.md §3 "Sessions, logout and wallet claims"). */
export const UserSession = Type.Object({
  id: Type.String(),
  /** The brand's slug. */
  brand: Type.String(),
  createdAt: Type.String(),
  lastSeenAt: Type.String(),
  userAgent: Type.Optional(Type.String()),
  ip: Type.Optional(Type.String()),
  /** The session whose cookie came with this request (false on bearer-only calls). */
  current: Type.Boolean(),
});
export const UserSessions = Type.Object({ items: Type.Array(UserSession) });
export const SessionIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const AppIdParams = Type.Object({ appId: Type.String({ minLength: 1, maxLength: 200 }) });
export const UserAppParams = Type.Object({
  userId: Type.String({ minLength: 1, maxLength: 64 }),
  appId: Type.String({ minLength: 1, maxLength: 200 }),
});
