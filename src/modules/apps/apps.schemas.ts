import { Type } from 'typebox';
import { listOf, Name, Nullable, PathId } from '../../http/schemas.js';
import { GRANT_TYPES } from '../../oidc/discovery.js';

export const APP_TYPES = ['web', 'spa', 'native', 'm2m', 'agent'] as const;
export type AppType = (typeof APP_TYPES)[number];

/** Upper bounds that keep an app's row and its tokens' lookups small; the interface sets none. */
export const MAX_REDIRECT_URIS = 20;
export const MAX_ALLOWED_SCOPES = 100;

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  uniqueItems: true,
  maxItems: MAX_REDIRECT_URIS,
});
const BackchannelLogoutUri = Nullable(
  Type.String({ minLength: 1, maxLength: 2000, description: 'HTTPS; receives back-channel logout tokens' }),
);
const GrantTypes = Type.Array(Type.Enum([...GRANT_TYPES]), { uniqueItems: true, minItems: 1 });
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 80 }), {
  uniqueItems: true,
  maxItems: MAX_ALLOWED_SCOPES,
});
const Description = Type.String({ maxLength: 500 });
/** DESIGN §3 "Gates in tokens": sign-in needs a linked wallet passing this gate policy of the org. */
const RequiredGatePolicyId = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      "A gate policy of the org that one of the user's linked wallets must pass to sign in (checked after sign-in, before consent, and at each refresh); null for none",
  }),
);

export const AppParams = Type.Object({
  orgSlug: PathId,
  brandSlug: PathId,
  clientId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const AppCreateBody = Type.Object(
  {
    name: Name,
    type: Type.Enum([...APP_TYPES]),
    isConfidential: Type.Optional(Type.Boolean()),
    redirectUris: Type.Optional(RedirectUris),
    postLogoutRedirectUris: Type.Optional(RedirectUris),
    backchannelLogoutUri: Type.Optional(BackchannelLogoutUri),
    allowedGrantTypes: GrantTypes,
    allowedScopes: Scopes,
    description: Type.Optional(Nullable(Description)),
    requiredGatePolicyId: Type.Optional(RequiredGatePolicyId),
  },
  { additionalProperties: false },
);

/** `type` and `isConfidential` are fixed at creation (they decide whether a secret exists). */
export const AppPatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    redirectUris: Type.Optional(RedirectUris),
    postLogoutRedirectUris: Type.Optional(RedirectUris),
    backchannelLogoutUri: Type.Optional(BackchannelLogoutUri),
    allowedGrantTypes: Type.Optional(GrantTypes),
    allowedScopes: Type.Optional(Scopes),
    enabled: Type.Optional(Type.Boolean()),
    requiredGatePolicyId: Type.Optional(RequiredGatePolicyId),
  },
  { additionalProperties: false },
);

export const AppListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

/** The App resource. `org` is the org id, `brand` the brand slug (the tokens' audience). */
export const App = Type.Object({
  id: Type.String(),
  brand: Type.String(),
  org: Type.String(),
  clientId: Type.String(),
  name: Type.String(),
  type: Type.String(),
  isConfidential: Type.Boolean(),
  redirectUris: Type.Array(Type.String()),
  /** Where /oauth2/logout may send the browser back to (exact match). */
  postLogoutRedirectUris: Type.Array(Type.String()),
  /** The app's back-channel logout receiver. */
  backchannelLogoutUri: Nullable(Type.String()),
  allowedGrantTypes: Type.Array(Type.String()),
  allowedScopes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  description: Nullable(Type.String()),
  requiredGatePolicyId: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

/** Only the create response of a confidential app carries the secret. */
export const AppCreated = Type.Object({
  ...App.properties,
  clientSecret: Type.Optional(Type.String()),
});

export const AppList = listOf(App);
export const RotatedSecret = Type.Object({ clientSecret: Type.String() });
