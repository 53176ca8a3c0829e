import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAccessToken } from '../../http/guards.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors, errorResponses, OrgParams } from '../../http/schemas.js';
import { type OrgScopeOptions, orgScope } from '../orgs/org-scope.js';
import {
  AcceptInvitationBody,
  CreateInvitationBody,
  InvitationAccepted,
  InvitationCreated,
  InvitationListQuery,
  InvitationParams,
  InvitationSchema,
} from './invitations.schemas.js';
import {
  acceptInvitation,
  createInvitation,
  listInvitations,
  revokeInvitation,
} from './invitations.service.js';

const doc = routeDoc('Invitations');

/** An org's invitation links: create (`org.members.edit`), list (`org.members.view`), revoke. */
export const invitationsRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.post(
    '/:orgSlug/invitations',
    {
      schema: {
        ...doc('createInvitation', 'Create a single-use invitation link into the organization', {
          description:
            'The link (`url`, shown once; only a hash of its token is kept) makes whoever accepts it a member ' +
            'with `roleIds`. The caller must hold every permission the roles give (else 403 with ' +
            "`details.missing`); the Owner role is 422; an unknown role or another org's is 404. " +
            '`expiresInDays` 1–30, default 7. Records `member.invited`.',
        }),
        params: OrgParams,
        body: CreateInvitationBody,
        response: { 201: InvitationCreated, ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) =>
      reply.code(201).send(await createInvitation(ctx, req.org.id, scope.actor(req), req.body)),
  );

  app.get(
    '/:orgSlug/invitations',
    {
      schema: {
        ...doc('listInvitations', "List the organization's invitations", {
          description:
            'Newest first, with their roles and status; `status` filters. Never the link or its token.',
        }),
        params: OrgParams,
        querystring: InvitationListQuery,
        response: {
          200: Type.Object({ items: Type.Array(InvitationSchema), total: Type.Integer() }),
          ...authErrors,
        },
      },
      preHandler: scope.read('org.members.view'),
    },
    async (req) => listInvitations(ctx, req.org.id, req.query),
  );

  app.delete(
    '/:orgSlug/invitations/:invitationId',
    {
      schema: {
        ...doc('revokeInvitation', 'Revoke an invitation', {
          description:
            'Its link stops working. Revoking one already revoked or expired changes nothing (204); an ' +
            'accepted one is 422. The caller must hold every permission its roles give, as to make it ' +
            '(else 403 with `details.missing`). Records `member.invitation.revoked`.',
        }),
        params: InvitationParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) => {
      await revokeInvitation(ctx, req.org.id, scope.actor(req), req.params.invitationId);
      return reply.code(204).send(null);
    },
  );
};

/** The invitee's side: a signed-in user accepts a link and joins its org. */
export const invitationAcceptRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  app.post(
    '/identity/invitations/accept',
    {
      schema: {
        ...doc('acceptInvitation', 'Accept an invitation and join its organization', {
          description:
            "The signed-in user joins with the invitation's roles (`member.added`); the link works once. " +
            'Unknown or revoked: 404; already used: 409; already a member: 409 (the link stays usable); ' +
            'expired: 422. 404 too, without consuming the link, while its creator could no longer make it ' +
            '(no longer a member with `org.members.edit` and every permission its roles give, and without ' +
            '`admin.orgs.edit`). At most 10 a minute per user.',
        }),
        body: AcceptInvitationBody,
        response: { 200: InvitationAccepted, ...authErrors, ...errorResponses(409, 422) },
      },
      // A person joins an org from a signed-in browser: an API key (leaked or scoped) cannot.
      preHandler: [
        authenticate(ctx),
        requireAccessToken,
        ctx.rateLimits.guard('invitationAccept', (req) => req.principal?.userId),
      ],
    },
    async (req) => acceptInvitation(ctx, principalOf(req).userId, req.body.token),
  );
};
