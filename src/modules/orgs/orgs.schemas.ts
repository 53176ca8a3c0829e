import { type Static, Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { FileTracker, IsoDate, Name, Nullable, OrgParams, PathId, Slug } from '../../http/schemas.js';
import { UserSchema } from '../users/user.presenter.js';

/** Path parameters are bounded so that nothing unreasonable reaches a query; unknown values are 404. */
const Description = Type.String({ maxLength: limits.descriptionMax });
const RoleName = Type.String({ minLength: 1, maxLength: limits.roleNameMax });

export { OrgParams };
export const RoleParams = Type.Object({ orgSlug: PathId, roleId: PathId });
export const MemberParams = Type.Object({ orgSlug: PathId, userId: PathId });
export const MemberRoleParams = Type.Object({ orgSlug: PathId, userId: PathId, roleId: PathId });

export const OrgSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  description: Type.Optional(Type.String()),
  iconFile: Type.Optional(FileTracker),
  createdBy: Type.String(),
  paymentProductId: Type.Optional(Nullable(Type.String())),
  paymentCustomerId: Type.Optional(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type OrgView = Static<typeof OrgSchema>;

export const CreateOrgBody = Type.Object(
  { name: Name, slug: Slug, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateOrgInput = Static<typeof CreateOrgBody>;

/** `slug` is immutable: sending it is a 400 `unknown_field` like any read-only field. */
export const UpdateOrgBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    iconFile: Type.Optional(Nullable(PathId)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateOrgInput = Static<typeof UpdateOrgBody>;

export const OrgListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: limits.orgListLimitMax, default: limits.orgListLimitDefault }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

export const RoleSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  isBuiltIn: Type.Boolean(),
  permissions: Type.Array(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type RoleView = Static<typeof RoleSchema>;

const PermissionList = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 });

export const CreateRoleBody = Type.Object(
  { name: RoleName, description: Type.Optional(Description), permissions: PermissionList },
  { additionalProperties: false },
);
export type CreateRoleInput = Static<typeof CreateRoleBody>;

export const UpdateRoleBody = Type.Object(
  {
    name: Type.Optional(RoleName),
    description: Type.Optional(Nullable(Description)),
    permissions: Type.Optional(PermissionList),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateRoleInput = Static<typeof UpdateRoleBody>;

export const MemberSchema = Type.Object({
  userId: Type.String(),
  user: UserSchema,
  roles: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  joinedAt: Type.String(),
});
export type MemberView = Static<typeof MemberSchema>;

/** Members page too; the default is large so that a client unaware of paging sees everyone in small orgs. */
export const MemberListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: limits.logLimitMax, default: limits.logLimitMax }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

export const AssignRoleBody = Type.Object({ roleId: PathId }, { additionalProperties: false });
export const TransferOwnershipBody = Type.Object({ newOwnerUserId: PathId }, { additionalProperties: false });

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  org: Type.String(),
  actorUserId: Nullable(Type.String()),
  action: Type.String(),
  resourceType: Type.String(),
  resourceId: Type.String(),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  timestamp: Type.String(),
});
export type AuditEntryView = Static<typeof AuditEntrySchema>;

const Filter = Type.String({ minLength: 1, maxLength: 200 });
export const AuditLogQuery = Type.Object({
  action: Type.Optional(Filter),
  actorUserId: Type.Optional(Filter),
  resourceType: Type.Optional(Filter),
  resourceId: Type.Optional(Filter),
  since: Type.Optional(IsoDate),
  until: Type.Optional(IsoDate),
  limit: Type.Integer({ minimum: 1, maximum: limits.logLimitMax, default: limits.logLimitDefault }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
export type AuditLogFilter = Static<typeof AuditLogQuery>;
