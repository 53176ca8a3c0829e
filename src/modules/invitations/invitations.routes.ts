import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
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

const OrgParams = Type.Object({ orgSlug: Type.String({ minLength: 1, maxLength: 100 }) });

/** An org's invitation links: create (`org.members.edit`), list (`org.members.view`), revoke. */
export const invitationsRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.post(
    '/:orgSlug/invitations',
    {
      schema: {
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
        body: AcceptInvitationBody,
        response: { 200: InvitationAccepted, ...authErrors, ...errorResponses(409, 422) },
      },
      preHandler: [
        authenticate(ctx),
        ctx.rateLimits.guard('invitationAccept', (req) => req.principal?.userId),
      ],
    },
    async (req) => acceptInvitation(ctx, principalOf(req).userId, req.body.token),
  );
};
