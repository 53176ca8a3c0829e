import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { authErrors } from '../../http/schemas.js';
import { type OrgScopeOptions, orgPrefix, orgScope } from '../orgs/org-scope.js';
import { BrandParams } from '../brands/brands.schemas.js';
import {
  Connection,
  ConnectionEnabledBody,
  ConnectionList,
  ConnectionParams,
  ConnectionPutBody,
} from './connections.schemas.js';
import {
  deleteConnection,
  listConnections,
  putConnection,
  setConnectionEnabled,
} from './connections.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Connections');

/** A brand's upstream sign-in credentials. Reads `org.connections.view`, writes `org.connections.edit`. */
export const connectionsRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx, opts);
  const base = `${orgPrefix(opts)}/brands/:brandSlug/connections`;

  app.put(
    base,
    {
      schema: {
        ...doc('putConnection', "Create or replace a brand's sign-in connection"),
        params: BrandParams,
        body: ConnectionPutBody,
        response: { 200: Connection, 201: Connection, ...authErrors },
      },
      preHandler: guard.write('org.connections.edit'),
    },
    async (req, reply) => {
      const { connection, created } = await putConnection(
        ctx,
        req.org,
        principalOf(req).userId,
        req.params.brandSlug,
        req.body,
      );
      return reply.code(created ? 201 : 200).send(connection);
    },
  );

  app.get(
    base,
    {
      schema: {
        ...doc('listConnections', "List a brand's sign-in connections"),
        params: BrandParams,
        response: { 200: ConnectionList, ...authErrors },
      },
      preHandler: guard.read('org.connections.view'),
    },
    async (req) => listConnections(ctx, req.org, req.params.brandSlug),
  );

  app.patch(
    `${base}/:type/enabled`,
    {
      schema: {
        ...doc('setConnectionEnabled', 'Enable or disable a connection'),
        params: ConnectionParams,
        body: ConnectionEnabledBody,
        response: { 200: Connection, ...authErrors },
      },
      preHandler: guard.write('org.connections.edit'),
    },
    async (req) =>
      setConnectionEnabled(
        ctx,
        req.org,
        principalOf(req).userId,
        req.params.brandSlug,
        req.params.type,
        req.body.enabled,
      ),
  );

  app.delete(
    `${base}/:type`,
    {
      schema: {
        ...doc('deleteConnection', 'Delete a connection'),
        params: ConnectionParams,
        response: { 204: Type.Null(), ...authErrors },
      },
      preHandler: guard.write('org.connections.edit'),
    },
    async (req, reply) => {
      await deleteConnection(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.params.type);
      return reply.code(204).send(null);
    },
  );
};
