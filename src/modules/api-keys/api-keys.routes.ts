import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { authErrors } from '../../http/schemas.js';
import { requireAccessToken, requireKeyScope } from '../../http/guards.js';
import { ApiKeyCreated, ApiKeyList, ApiKeyParams, ApiKeyView, CreateApiKeyBody } from './api-keys.schemas.js';
import { createApiKey, listKeys, revokeKey } from './api-keys.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('API keys');

/** User API keys: created and revoked with an access token, listed without the key. */
export const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const byUser = (req: { principal: { userId: string } | null }) => req.principal?.userId;

  app.post(
    '/users/me/api-keys',
    {
      schema: {
        ...doc('createApiKey', 'Create a user API key (the key is shown once)'),
        body: CreateApiKeyBody,
        response: { 201: ApiKeyCreated, ...authErrors },
      },
      preHandler: [authenticate(ctx), requireAccessToken, ctx.rateLimits.guard('apiKeyCreate', byUser)],
    },
    async (req, reply) => {
      const created = await createApiKey(ctx, principalOf(req).userId, req.body);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.get(
    '/users/me/api-keys',
    {
      schema: {
        ...doc('listApiKeys', "List the caller's API keys (without the keys)"),
        response: { 200: ApiKeyList, ...authErrors },
      },
      preHandler: [
        authenticate(ctx),
        requireKeyScope('users:read'),
        ctx.rateLimits.guard('usersMeRead', byUser),
      ],
    },
    async (req) => ({ items: await listKeys(ctx, principalOf(req).userId) }),
  );

  app.delete(
    '/users/me/api-keys/:id',
    {
      schema: {
        ...doc('revokeApiKey', 'Revoke an API key'),
        params: ApiKeyParams,
        response: { 200: ApiKeyView, ...authErrors },
      },
      preHandler: [authenticate(ctx), requireAccessToken, ctx.rateLimits.guard('usersMeWrite', byUser)],
    },
    async (req) => revokeKey(ctx, principalOf(req).userId, req.params.id),
  );
};
