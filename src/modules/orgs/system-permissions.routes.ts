import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { ADMIN_PERMISSIONS } from '../../http/permissions.js';
import { systemPermissions } from './org.guards.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors } from '../../http/schemas.js';
import { credentialAllowsSystem } from './org-scope.js';
import { requireKeyScope } from '../../http/guards.js';

export const MySystemPermissions = Type.Object({
  permissions: Type.Array(
    Type.Union([
      Type.Literal('admin.orgs.view'),
      Type.Literal('admin.orgs.edit'),
      Type.Literal('admin.users.view'),
    ]),
  ),
});

const doc = routeDoc('Users');

/**
 * The system permissions the caller can use with this credential (an API key only those its scopes
 * allow): the console shows the operator's views to their holders only.
 */
export const systemPermissionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  app.get(
    '/users/me/system-permissions',
    {
      schema: {
        ...doc('listMySystemPermissions', 'The system permissions the caller holds', {
          description:
            'Granted with `gatehouse admin grant`. With an API key, only the permissions its scopes allow.',
        }),
        response: { 200: MySystemPermissions, ...authErrors },
      },
      preHandler: [
        authenticate(ctx),
        requireKeyScope('users:read'),
        ctx.rateLimits.guard('usersMeRead', (req) => req.principal?.userId),
      ],
    },
    async (req) => {
      const principal = principalOf(req);
      const held = await systemPermissions(ctx, principal.userId);
      return {
        permissions: ADMIN_PERMISSIONS.filter((p) => held.has(p) && credentialAllowsSystem(principal, p)),
      };
    },
  );
};
