import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { defaults } from './config/defaults.js';
import type { AppContext } from './context.js';
import { requestValidatorCompiler } from './http/ajv.js';
import { cachedSerializerFactory } from './http/serializer.js';
import { frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { installInputRules } from './http/input-rules.js';
import { installKeyScopes } from './http/key-scopes.js';
import { lazyChildLoggerFactory } from './http/logger.js';
import { trustProxyOption } from './http/network-source.js';
import { consoleRoutes } from './console/console.routes.js';
import { startJobs } from './jobs/jobs.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { appsRoutes } from './modules/apps/apps.routes.js';
import { brandsRoutes } from './modules/brands/brands.routes.js';
import { connectionsRoutes } from './modules/connections/connections.routes.js';
import { invitationAcceptRoutes, invitationsRoutes } from './modules/invitations/invitations.routes.js';
import { scopesRoutes } from './modules/scopes/scopes.routes.js';
import { filesRoutes } from './modules/files/files.routes.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { webhookInspectRoutes } from './modules/webhooks/webhooks.inspect.js';
import { gatePoliciesRoutes } from './modules/token-gates/gate-policies.routes.js';
import { mintInfoRoutes } from './modules/token-gates/mint-info.js';
import { orgsRoutes } from './modules/orgs/orgs.routes.js';
import { tokenGatesRoutes } from './modules/token-gates/token-gates.routes.js';
import { wellKnownRoutes } from './oidc/discovery.js';
import { pageAssetRoutes } from './oidc/pages/assets.js';
import { brandPreviewRoutes } from './oidc/pages/brand-preview.routes.js';
import { providerRoutes } from './oidc/signin/provider-routes.js';
import { logoutRoutes } from './oidc/signin/logout-routes.js';
import { signinRoutes } from './oidc/signin/signin-routes.js';
import { tokenRoutes } from './oidc/token-routes.js';
import { installOpenApi } from './openapi/plugin.js';
import { healthRoutes } from './ops/health.js';
import { createLogger } from './ops/logging.js';
import { offerToClusterPrimary, startMetricsServer } from './ops/metrics.js';
import { instrumentRequests } from './ops/requests.js';
import { closeContext } from './wiring.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * Request ids for the logs: a random prefix per process and a counter, unique across instances and
 * restarts. A UUID per request (random bytes, formatting, refilling the entropy buffer) was 2 % of a
 * cached token-gate check; nothing needs these ids to be unguessable.
 */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let seq = 0;
  return () => `${prefix}-${(++seq).toString(36)}`;
}

/**
 * The Prometheus endpoint on its own port (METRICS_PORT), started when the app is ready; a cluster's
 * primary serves it for all workers (src/cluster.ts).
 */
function serveMetrics(app: FastifyInstance, ctx: AppContext): void {
  const port = ctx.config.metricsPort;
  if (port === undefined) return;
  if (cluster.isWorker) {
    offerToClusterPrimary(ctx.metrics);
    return;
  }
  let server: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  app.addHook('onReady', async () => {
    ctx.metrics.collectProcessMetrics();
    server = await startMetricsServer(ctx.metrics.registry, port, ctx.config.host, app.log);
    ctx.metrics.port = server.port;
  });
  app.addHook('onClose', async () => server?.close());
}

export interface BuildOptions {
  /** Close the context's stores when the app closes (default true). */
  ownsContext?: boolean;
  /** Where log lines go (default stdout); tests read them to check redaction. */
  logStream?: { write(line: string): void };
  /** The process logger (main.ts makes one before the stores, for the migration lines). */
  logger?: Logger;
}

/**
 * The REST modules, the hosted brand preview and the console, in dependency order. Route plugins
 * that live under another module's routes (invitations under an org, apps under a brand) are
 * registered here, so no module imports another's routes.
 */
async function registerModules(app: FastifyInstance): Promise<void> {
  await app.register(webhooksRoutes);
  await app.register(webhookInspectRoutes);
  // Invitations are org-scoped routes too (`/:orgSlug/invitations`, and the admin mirror).
  await app.register(orgsRoutes, { orgScoped: [invitationsRoutes] });
  await app.register(invitationAcceptRoutes);
  // Brands and what hangs off them, for members and again as the `/admin/...` mirror.
  for (const admin of [false, true])
    for (const routes of [brandsRoutes, appsRoutes, scopesRoutes, connectionsRoutes])
      await app.register(routes, { admin });
  await app.register(tokenGatesRoutes);
  await app.register(mintInfoRoutes);
  await app.register(gatePoliciesRoutes);
  await app.register(apiKeysRoutes);
  await app.register(usersRoutes);
  await app.register(brandPreviewRoutes);
  await app.register(consoleRoutes);
}

/**
 * Builds the Fastify app on a prepared context. Does not listen: `main.ts` does, tests inject.
 * Modules register here, each as a plugin.
 */
export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const logger =
    opts.logger ?? (ctx.config.logLevel === 'silent' ? undefined : createLogger(ctx.config, opts.logStream));
  const app = Fastify({
    ...(logger ? { loggerInstance: logger as FastifyBaseLogger } : { logger: false }),
    // One line per request, written by instrumentRequests (Fastify's own are two, health probes included).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory(ctx.config.logLevel),
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    bodyLimit: defaults.maxBodyBytes,
    genReqId: requestIds(),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    forceCloseConnections: 'idle',
    frameworkErrors: frameworkErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: cachedSerializerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(requestValidatorCompiler());

  installInputRules(app);

  app.decorate('ctx', ctx);
  if (app.log) ctx.invalidation.setLog(app.log);
  app.decorateRequest('principal', null);
  app.decorateRequest('org', null as never);
  app.decorateRequest('orgPermissions', null as never);
  const observeUnrouted = instrumentRequests(app, ctx, logger ? app.log : null);
  installErrorHandling(app, { onNotFound: observeUnrouted });
  // Before any route: every route that authenticates must say what an API key needs there.
  installKeyScopes(app);
  // JSON, forms and multipart only: a text/plain body is refused with 415, not parsed as a string.
  app.removeContentTypeParser('text/plain');

  // A callback hook, not async: it runs on every response and a promise per request shows in benchmarks.
  app.addHook('onRequest', (_req, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    done();
  });

  // Before any route: it collects every route for GET /openapi.json.
  installOpenApi(app, { version, baseUrl: ctx.config.baseUrl });
  await app.register(formbody);

  // Background work (sweepers, pruning, the webhook worker) with this app's logger.
  startJobs(app);
  await app.register(healthRoutes);
  await app.register(wellKnownRoutes);
  await app.register(filesRoutes);
  // Modules: one line each, in dependency order.
  // The issuer's browser-facing routes, the only ones that read or set cookies (sessions, the
  // interaction binding): the cookie hooks run on their requests only, not on every API call.
  await app.register(async (issuer) => {
    await issuer.register(cookie);
    await issuer.register(tokenRoutes);
    await issuer.register(pageAssetRoutes);
    await issuer.register(signinRoutes);
    await issuer.register(logoutRoutes);
    await issuer.register(providerRoutes);
  });
  await registerModules(app);

  serveMetrics(app, ctx);

  if (opts.ownsContext !== false) app.addHook('onClose', async () => closeContext(ctx));
  return app;
}
