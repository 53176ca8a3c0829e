import { type Static, Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { PathId } from '../../http/schemas.js';

export const InvitationParams = Type.Object({ orgSlug: PathId, invitationId: PathId });

export const CreateInvitationBody = Type.Object(
  {
    roleIds: Type.Array(PathId, { minItems: 1, maxItems: 20, uniqueItems: true }),
    expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: defaults.invitationMaxDays })),
  },
  { additionalProperties: false },
);
export type CreateInvitationInput = Static<typeof CreateInvitationBody>;

/** The create response: the link carries the token, shown this once. */
export const InvitationCreated = Type.Object({
  id: Type.String(),
  url: Type.String(),
  expiresAt: Type.String(),
});

const RoleRef = Type.Object({ id: Type.String(), name: Type.String() });

export const InvitationSchema = Type.Object({
  id: Type.String(),
  roles: Type.Array(RoleRef),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('accepted'),
    Type.Literal('revoked'),
    Type.Literal('expired'),
  ]),
  createdBy: Type.String(),
  createdAt: Type.String(),
  expiresAt: Type.String(),
  acceptedBy: Type.Optional(Type.String()),
});
export type InvitationView = Static<typeof InvitationSchema>;

export const InvitationListQuery = Type.Object(
  { status: Type.Optional(InvitationSchema.properties.status) },
  { additionalProperties: false },
);

export const AcceptInvitationBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const InvitationAccepted = Type.Object({
  org: Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String() }),
  roles: Type.Array(RoleRef),
});
