import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { type OrgScopeOptions, orgPrefix, orgScope } from '../orgs/org-scope.js';
import { BrandParams } from '../brands/brands.schemas.js';
import {
  App,
  AppCreateBody,
  AppCreated,
  AppList,
  AppListQuery,
  AppParams,
  AppPatchBody,
  RotatedSecret,
} from './apps.schemas.js';
import { createApp, deleteApp, getApp, listApps, rotateSecret, updateApp } from './apps.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Apps');

/** Apps (OAuth clients) of a brand. Reads need `org.apps.view`, writes `org.apps.edit`. */
export const appsRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx, opts);
  const base = `${orgPrefix(opts)}/brands/:brandSlug/apps`;

  app.post(
    base,
    {
      schema: {
        ...doc('createApp', 'Create an app (OAuth client) in a brand'),
        params: BrandParams,
        body: AppCreateBody,
        response: { 201: AppCreated, ...authErrors, ...errorResponses(409) },
      },
      preHandler: guard.write('org.apps.edit'),
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await createApp(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.body)),
  );

  app.get(
    base,
    {
      schema: {
        ...doc('listApps', "List a brand's apps"),
        params: BrandParams,
        querystring: AppListQuery,
        response: { 200: AppList, ...authErrors },
      },
      preHandler: guard.read('org.apps.view'),
    },
    async (req) => listApps(ctx, req.org, req.params.brandSlug, req.query),
  );

  app.get(
    `${base}/:clientId`,
    {
      schema: { ...doc('getApp', 'Get an app'), params: AppParams, response: { 200: App, ...authErrors } },
      preHandler: guard.read('org.apps.view'),
    },
    async (req) => getApp(ctx, req.org, req.params.brandSlug, req.params.clientId),
  );

  app.patch(
    `${base}/:clientId`,
    {
      schema: {
        ...doc('updateApp', 'Update an app'),
        params: AppParams,
        body: AppPatchBody,
        response: { 200: App, ...authErrors, ...errorResponses(422) },
      },
      preHandler: guard.write('org.apps.edit'),
    },
    async (req) =>
      updateApp(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.params.clientId, req.body),
  );

  app.post(
    `${base}/:clientId/rotate-secret`,
    {
      schema: {
        ...doc('rotateAppSecret', "Rotate a confidential app's client secret"),
        params: AppParams,
        response: { 200: RotatedSecret, ...authErrors, ...errorResponses(422) },
      },
      preHandler: guard.write('org.apps.edit'),
    },
    async (req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await rotateSecret(
            ctx,
            req.org,
            principalOf(req).userId,
            req.params.brandSlug,
            req.params.clientId,
          ),
        ),
  );

  app.delete(
    `${base}/:clientId`,
    {
      schema: {
        ...doc('deleteApp', 'Delete an app'),
        params: AppParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: guard.write('org.apps.edit'),
    },
    async (req, reply) => {
      await deleteApp(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.params.clientId);
      return reply.code(204).send(null);
    },
  );
};
