import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { FileTracker, listOf, Name, Nullable, OrgParams, PathId, Slug } from '../../http/schemas.js';
import { SIGN_IN_METHODS, WALLET_PROVIDER } from '../../providers/types.js';

/** `#rgb` or `#rrggbb`. */
export const HexColor = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$' });
export const Email = Type.String({ format: 'email', maxLength: 254 });
/** Checked again in the service with the URL parser (host present, no credentials). */
export const HttpsUrl = Type.String({ pattern: '^https://\\S+$', maxLength: 2000 });
export const FileId = Type.String({ minLength: 1, maxLength: 100 });
export const ProviderOrder = Type.Array(Type.Enum([...SIGN_IN_METHODS]), {
  uniqueItems: true,
  maxItems: SIGN_IN_METHODS.length,
});
export const DEFAULT_PROVIDER_ORDER = [WALLET_PROVIDER];

export { OrgParams };
export const BrandParams = Type.Object({
  orgSlug: PathId,
  brandSlug: PathId,
});

export const BrandCreateBody = Type.Object(
  {
    slug: Slug,
    name: Name,
    primaryColor: Type.Optional(HexColor),
    supportEmail: Type.Optional(Email),
    privacyPolicyUrl: Type.Optional(HttpsUrl),
    termsUrl: Type.Optional(HttpsUrl),
    logoFile: Type.Optional(FileId),
    providerOrder: Type.Optional(ProviderOrder),
  },
  { additionalProperties: false },
);

/** `slug` and `oauthCallbackId` are immutable: sending them is an unknown field (400). */
export const BrandPatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    primaryColor: Type.Optional(Nullable(HexColor)),
    supportEmail: Type.Optional(Nullable(Email)),
    privacyPolicyUrl: Type.Optional(Nullable(HttpsUrl)),
    termsUrl: Type.Optional(Nullable(HttpsUrl)),
    logoFile: Type.Optional(Nullable(FileId)),
    providerOrder: Type.Optional(ProviderOrder),
  },
  { additionalProperties: false },
);

export const BrandListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: limits.orgListLimitMax, default: limits.orgListLimitDefault }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const LogoFile = Type.Object({
  id: Type.String(),
  fileKey: FileTracker.properties.fileKey,
  url: FileTracker.properties.url,
  contentType: FileTracker.properties.contentType,
  bytes: FileTracker.properties.bytes,
});

/** The Brand resource. `org` is the org id; optional fields are absent when unset. */
export const Brand = Type.Object({
  id: Type.String(),
  org: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  oauthCallbackId: Type.String(),
  logoFile: Type.Optional(LogoFile),
  primaryColor: Type.Optional(Type.String()),
  supportEmail: Type.Optional(Type.String()),
  privacyPolicyUrl: Type.Optional(Type.String()),
  termsUrl: Type.Optional(Type.String()),
  providerOrder: Type.Array(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const BrandList = listOf(Brand);
