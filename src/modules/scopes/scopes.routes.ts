import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { type OrgScopeOptions, orgPrefix, orgScope } from '../orgs/org-scope.js';
import { BrandParams } from '../brands/brands.schemas.js';
import { Scope, ScopeCreateBody, ScopeList, ScopeParams, ScopePatchBody } from './scopes.schemas.js';
import { createScope, deleteScope, getScope, listScopes, updateScope } from './scopes.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Scopes');

/** A brand's scope vocabulary. Reads need `org.brands.view`, writes `org.scopes.edit` (DESIGN.md §4). */
export const scopesRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx, opts);
  const base = `${orgPrefix(opts)}/brands/:brandSlug/scopes`;

  app.get(
    base,
    {
      schema: {
        ...doc('listScopes', "List a brand's custom scopes"),
        params: BrandParams,
        response: { 200: ScopeList, ...authErrors },
      },
      preHandler: guard.read('org.brands.view'),
    },
    async (req) => listScopes(ctx, req.org, req.params.brandSlug),
  );

  app.get(
    `${base}/:name`,
    {
      schema: {
        ...doc('getScope', 'Get a custom scope'),
        params: ScopeParams,
        response: { 200: Scope, ...authErrors },
      },
      preHandler: guard.read('org.brands.view'),
    },
    async (req) => getScope(ctx, req.org, req.params.brandSlug, req.params.name),
  );

  app.post(
    base,
    {
      schema: {
        ...doc('createScope', 'Create a custom scope'),
        params: BrandParams,
        body: ScopeCreateBody,
        response: { 201: Scope, ...authErrors, ...errorResponses(409) },
      },
      preHandler: guard.write('org.scopes.edit'),
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createScope(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.body)),
  );

  app.patch(
    `${base}/:name`,
    {
      schema: {
        ...doc('updateScope', 'Update a custom scope'),
        params: ScopeParams,
        body: ScopePatchBody,
        response: { 200: Scope, ...authErrors },
      },
      preHandler: guard.write('org.scopes.edit'),
    },
    async (req) =>
      updateScope(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.params.name, req.body),
  );

  app.delete(
    `${base}/:name`,
    {
      schema: {
        ...doc('deleteScope', 'Delete a custom scope'),
        params: ScopeParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(409) },
      },
      preHandler: guard.write('org.scopes.edit'),
    },
    async (req, reply) => {
      await deleteScope(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.params.name);
      return reply.code(204).send(null);
    },
  );
};
