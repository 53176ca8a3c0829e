import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { authErrors, listOf } from '../../http/schemas.js';
import { auditLog } from './audit-log.service.js';
import { type OrgScopeOptions, orgScope } from './org-scope.js';
import { AuditEntrySchema, AuditLogQuery, OrgParams } from './orgs.schemas.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Audit log');

/** The org's audit log (interface: `IdentityOrgPermission.MembersView`). */
export const auditLogRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);

  app.get(
    '/:orgSlug/audit-log',
    {
      schema: {
        ...doc('listAuditLog', "Read an organization's audit log"),
        params: OrgParams,
        querystring: AuditLogQuery,
        response: { 200: listOf(AuditEntrySchema), ...authErrors },
      },
      preHandler: scope.auditRead('org.members.view'),
    },
    async (req) => auditLog(ctx, req.org.id, req.query),
  );
};
