import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { type OrgScopeOptions, orgPrefix, orgScope } from '../orgs/org-scope.js';
import {
  Brand,
  BrandCreateBody,
  BrandList,
  BrandListQuery,
  BrandParams,
  BrandPatchBody,
  OrgParams,
} from './brands.schemas.js';
import { createBrand, deleteBrand, getBrand, listBrands, updateBrand } from './brands.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Brands');

export const brandsRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx, opts);
  const base = `${orgPrefix(opts)}/brands`;

  app.post(
    base,
    {
      schema: {
        ...doc('createBrand', 'Create a brand'),
        params: OrgParams,
        body: BrandCreateBody,
        response: { 201: Brand, ...authErrors, ...errorResponses(409) },
      },
      preHandler: guard.write('org.brands.edit'),
    },
    async (req, reply) =>
      reply.code(201).send(await createBrand(ctx, req.org, principalOf(req).userId, req.body)),
  );

  app.get(
    base,
    {
      schema: {
        ...doc('listBrands', "List an organization's brands"),
        params: OrgParams,
        querystring: BrandListQuery,
        response: { 200: BrandList, ...authErrors },
      },
      preHandler: guard.read('org.brands.view'),
    },
    async (req) => listBrands(ctx, req.org, req.query),
  );

  app.get(
    `${base}/:brandSlug`,
    {
      schema: {
        ...doc('getBrand', 'Get a brand'),
        params: BrandParams,
        response: { 200: Brand, ...authErrors },
      },
      preHandler: guard.read('org.brands.view'),
    },
    async (req) => getBrand(ctx, req.org, req.params.brandSlug),
  );

  app.patch(
    `${base}/:brandSlug`,
    {
      schema: {
        ...doc('updateBrand', 'Update a brand'),
        params: BrandParams,
        body: BrandPatchBody,
        response: { 200: Brand, ...authErrors },
      },
      preHandler: guard.write('org.brands.edit'),
    },
    async (req) => updateBrand(ctx, req.org, principalOf(req).userId, req.params.brandSlug, req.body),
  );

  app.delete(
    `${base}/:brandSlug`,
    {
      schema: {
        ...doc('deleteBrand', 'Delete a brand'),
        params: BrandParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(422) },
      },
      preHandler: guard.write('org.brands.edit'),
    },
    async (req, reply) => {
      await deleteBrand(ctx, req.org, principalOf(req).userId, req.params.brandSlug);
      return reply.code(204).send(null);
    },
  );
};
