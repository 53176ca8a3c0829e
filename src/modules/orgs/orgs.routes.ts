import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { ORG_PERMISSIONS } from '../../http/permissions.js';
import { requireSystemPermission } from '../../http/guards.js';
import { systemPermissions } from './org.guards.js';
import { authErrors, errorResponses, listOf } from '../../http/schemas.js';
import { auditExportRoutes } from './audit-log.export.js';
import { auditLogRoutes } from './audit-log.routes.js';
import { membersRoutes } from './members.routes.js';
import { credentialAllowsSystem, type OrgScopeOptions, orgScope } from './org-scope.js';
import { CreateOrgBody, OrgListQuery, OrgParams, OrgSchema, UpdateOrgBody } from './orgs.schemas.js';
import { createOrg, deleteOrg, listOrgs, presentOrg, updateOrg } from './orgs.service.js';
import { rolesRoutes } from './roles.routes.js';
import { slugAvailabilityRoutes } from './slug-availability.routes.js';
import { systemPermissionsRoutes } from './system-permissions.routes.js';
import { routeDoc } from '../../http/route-doc.js';

/** Org-scoped route plugins of other modules, registered by src/app.ts (invitations). */
export interface OrgsRoutesOptions {
  /** Registered under `/:orgSlug` after the org's own routes, for members and as the admin mirror. */
  orgScoped?: Array<FastifyPluginAsyncTypebox<OrgScopeOptions>>;
}

/** The routes under `/:orgSlug`, registered for members and again as the admin mirror. */
const orgScopedRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions & OrgsRoutesOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.get(
    '/:orgSlug',
    {
      schema: {
        ...doc('getOrganization', 'Get an organization'),
        params: OrgParams,
        response: { 200: OrgSchema, ...authErrors },
      },
      preHandler: scope.read('org.read'),
    },
    async (req) => presentOrg(ctx.db, ctx, req.org),
  );

  app.patch(
    '/:orgSlug',
    {
      schema: {
        ...doc('updateOrganization', 'Update an organization'),
        params: OrgParams,
        body: UpdateOrgBody,
        response: { 200: OrgSchema, ...authErrors },
      },
      preHandler: scope.write('org.edit'),
    },
    async (req) => updateOrg(ctx, req.org, principalOf(req).userId, req.body),
  );

  app.delete(
    '/:orgSlug',
    {
      schema: {
        ...doc('deleteOrganization', 'Delete an organization'),
        params: OrgParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: scope.write('org.delete'),
    },
    async (req, reply) => {
      await deleteOrg(ctx, req.org, principalOf(req).userId, { admin: opts.admin });
      return reply.code(204).send(null);
    },
  );

  // Only `admin` passes down: the prefix is already applied to this plugin's children.
  const scoped = { admin: opts.admin };
  await app.register(rolesRoutes, scoped);
  await app.register(membersRoutes, scoped);
  await app.register(auditLogRoutes, scoped);
  await app.register(auditExportRoutes, scoped);
  for (const routes of opts.orgScoped ?? []) await app.register(routes, scoped);
};

const doc = routeDoc('Organizations');

/** Organizations, their roles and members, the audit log, and the admin mirror of all of it. */
export const orgsRoutes: FastifyPluginAsyncTypebox<OrgsRoutesOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const byUser = (req: { principal: { userId: string } | null }) =>
    req.principal ? `user:${req.principal.userId}` : undefined;

  app.post(
    '/identity/organizations',
    {
      schema: {
        ...doc('createOrganization', 'Create an organization (the caller becomes its owner)'),
        body: CreateOrgBody,
        response: { 201: OrgSchema, ...authErrors, ...errorResponses(409) },
      },
      // An account-level write: no org permission applies.
      config: { apiKeyScope: ['users:write'] },
      preHandler: [authenticate(ctx), ctx.rateLimits.guard('orgWrite', byUser)],
    },
    async (req, reply) => reply.code(201).send(await createOrg(ctx, principalOf(req).userId, req.body)),
  );

  app.get(
    '/identity/organizations',
    {
      schema: {
        ...doc('listOrganizations', 'List the organizations the caller belongs to'),
        querystring: OrgListQuery,
        response: { 200: listOf(OrgSchema), ...authErrors },
      },
      // A key made for any org permission must be able to find its orgs.
      config: { apiKeyScope: ['users:read', ...ORG_PERMISSIONS, 'admin.orgs.view'] },
      preHandler: [authenticate(ctx), ctx.rateLimits.guard('orgRead', byUser)],
    },
    async (req) => {
      const principal = principalOf(req);
      const userId = principal.userId;
      const all =
        (await systemPermissions(ctx, userId)).has('admin.orgs.view') &&
        credentialAllowsSystem(principal, 'admin.orgs.view');
      return listOrgs(ctx, { memberUserId: all ? undefined : userId, ...req.query });
    },
  );

  app.get(
    '/admin/identity/organizations',
    {
      schema: {
        ...doc('adminListOrganizations', 'List every organization (system admin)'),
        querystring: OrgListQuery,
        response: { 200: listOf(OrgSchema), ...authErrors },
      },
      preHandler: [
        authenticate(ctx),
        requireSystemPermission(ctx, 'admin.orgs.view'),
        ctx.rateLimits.guard('orgRead', byUser),
      ],
    },
    async (req) => listOrgs(ctx, req.query),
  );

  await app.register(slugAvailabilityRoutes);
  await app.register(systemPermissionsRoutes);
  const { orgScoped } = opts;
  await app.register(orgScopedRoutes, { prefix: '/identity/organizations', admin: false, orgScoped });
  await app.register(orgScopedRoutes, { prefix: '/admin/identity/organizations', admin: true, orgScoped });
};
