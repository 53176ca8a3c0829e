import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authErrors, errorResponses, listOf } from '../../http/schemas.js';
import { assignRole, listMembers, removeMember, removeRole, transferOwnership } from './members.service.js';
import { type OrgScopeOptions, orgScope } from './org-scope.js';
import {
  AssignRoleBody,
  MemberListQuery,
  MemberParams,
  MemberRoleParams,
  MemberSchema,
  OrgParams,
  TransferOwnershipBody,
} from './orgs.schemas.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Members');

/** Members of an org, their roles, and ownership. */
export const membersRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.get(
    '/:orgSlug/members',
    {
      schema: {
        ...doc('listMembers', "List an organization's members"),
        params: OrgParams,
        querystring: MemberListQuery,
        response: { 200: listOf(MemberSchema), ...authErrors },
      },
      preHandler: scope.read('org.members.view'),
    },
    async (req) => listMembers(ctx, req.org.id, req.query),
  );

  app.post(
    '/:orgSlug/members/:userId/roles',
    {
      schema: {
        ...doc('assignMemberRole', 'Give a member a role', {
          description:
            'A user who is not a member answers 404: people join by accepting an invitation. ' +
            'The admin mirror adds the user when new.',
        }),
        params: MemberParams,
        body: AssignRoleBody,
        response: { 201: MemberSchema, ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await assignRole(ctx, req.org.id, scope.actor(req), req.params.userId, req.body.roleId)),
  );

  app.delete(
    '/:orgSlug/members/:userId/roles/:roleId',
    {
      schema: {
        ...doc('removeMemberRole', 'Take a role from a member'),
        params: MemberRoleParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) => {
      await removeRole(ctx, req.org.id, scope.actor(req), req.params.userId, req.params.roleId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/:orgSlug/members/:userId',
    {
      schema: {
        ...doc('removeMember', 'Remove a member from the organization'),
        params: MemberParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) => {
      await removeMember(ctx, req.org.id, scope.actor(req), req.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:orgSlug/transfer-ownership',
    {
      schema: {
        ...doc('transferOwnership', "Transfer the organization's ownership"),
        params: OrgParams,
        body: TransferOwnershipBody,
        response: { 200: MemberSchema, ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.ownership.transfer'),
    },
    async (req) => transferOwnership(ctx, req.org.id, scope.actor(req), req.body.newOwnerUserId),
  );
};
