import type { FastifyPluginAsync } from 'fastify';
import { appsRoutes } from '../apps/apps.routes.js';
import { connectionsRoutes } from '../connections/connections.routes.js';
import { scopesRoutes } from '../scopes/scopes.routes.js';
import { brandsRoutes } from './brands.routes.js';

/**
 * Brands and what hangs off them (apps, scopes, connections), under
 * `/identity/organizations/:orgSlug/brands` and its `/admin/...` mirror.
 */
export const brandsModule: FastifyPluginAsync = async (app) => {
  for (const admin of [false, true]) {
    await app.register(brandsRoutes, { admin });
    await app.register(appsRoutes, { admin });
    await app.register(scopesRoutes, { admin });
    await app.register(connectionsRoutes, { admin });
  }
};
