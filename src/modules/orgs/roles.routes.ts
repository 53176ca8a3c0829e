import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { type OrgScopeOptions, orgScope } from './org-scope.js';
import { CreateRoleBody, OrgParams, RoleParams, RoleSchema, UpdateRoleBody } from './orgs.schemas.js';
import { createRole, deleteRole, listRoles, updateRole } from './roles.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Roles');

/** Roles of an org (DESIGN.md §4: list with `org.read`, changes with `org.members.edit`). */
export const rolesRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.get(
    '/:orgSlug/roles',
    {
      schema: {
        ...doc('listRoles', "List an organization's roles"),
        params: OrgParams,
        response: {
          200: Type.Object({ items: Type.Array(RoleSchema), total: Type.Integer() }),
          ...authErrors,
        },
      },
      preHandler: scope.read('org.read'),
    },
    async (req) => listRoles(ctx, req.org.id),
  );

  app.post(
    '/:orgSlug/roles',
    {
      schema: {
        ...doc('createRole', 'Create a custom role'),
        params: OrgParams,
        body: CreateRoleBody,
        response: { 201: RoleSchema, ...authErrors, ...errorResponses(409) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) => reply.code(201).send(await createRole(ctx, req.org.id, scope.actor(req), req.body)),
  );

  app.patch(
    '/:orgSlug/roles/:roleId',
    {
      schema: {
        ...doc('updateRole', 'Update a custom role'),
        params: RoleParams,
        body: UpdateRoleBody,
        response: { 200: RoleSchema, ...authErrors, ...errorResponses(409, 422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req) => updateRole(ctx, req.org.id, req.params.roleId, scope.actor(req), req.body),
  );

  app.delete(
    '/:orgSlug/roles/:roleId',
    {
      schema: {
        ...doc('deleteRole', 'Delete a custom role'),
        params: RoleParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(409, 422) },
      },
      preHandler: scope.write('org.members.edit'),
    },
    async (req, reply) => {
      await deleteRole(ctx, req.org.id, req.params.roleId, scope.actor(req));
      return reply.code(204).send(null);
    },
  );
};
