import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { defaults } from './config/defaults.js';
import type { AppContext } from './context.js';
import { makeAjv } from './http/ajv.js';
import { installErrorHandling } from './http/error-handler.js';
import { lazyChildLoggerFactory } from './http/logger.js';
import { consoleRoutes } from './console/console.routes.js';
import { brandsModule } from './modules/brands/brands.plugin.js';
import { invitationAcceptRoutes } from './modules/invitations/invitations.routes.js';
import { filesRoutes } from './modules/files/files.routes.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { orgsRoutes } from './modules/orgs/orgs.routes.js';
import { tokenGatesRoutes } from './modules/token-gates/token-gates.routes.js';
import { wellKnownRoutes } from './oidc/discovery.js';
import { providerRoutes } from './oidc/provider-routes.js';
import { signinRoutes } from './oidc/signin-routes.js';
import { tokenRoutes } from './oidc/token-routes.js';
import { installOpenApi } from './openapi/plugin.js';
import { healthRoutes } from './ops/health.js';
import { closeContext } from './server.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.client_secret',
  '*.clientSecret',
  '*.secret',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.code',
  '*.config',
  '*.key',
  '*.password',
];

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

export interface BuildOptions {
  /** Close the context's stores when the app closes (default true). */
  ownsContext?: boolean;
  /** Where log lines go (default stdout); tests read them to check redaction. */
  logStream?: { write(line: string): void };
}

/**
 * Builds the Fastify app on a prepared context. Does not listen: `main.ts` does, tests inject.
 * Modules register here, each as a plugin.
 */
export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      ctx.config.logLevel === 'silent'
        ? false
        : {
            level: ctx.config.logLevel,
            ...(opts.logStream ? { stream: opts.logStream } : {}),
            redact: { paths: REDACT, censor: '[redacted]' },
            serializers: {
              // Paths only: query strings can carry codes, user codes or provider data.
              req: (req) => ({ method: req.method, url: req.url.split('?')[0], remoteAddress: req.ip }),
            },
          },
    childLoggerFactory: lazyChildLoggerFactory(ctx.config.logLevel),
    trustProxy: ctx.config.trustProxy,
    bodyLimit: defaults.maxBodyBytes,
    genReqId: requestIds(),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  const bodyAjv = makeAjv(false);
  const paramAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema),
  );

  app.decorate('ctx', ctx);
  app.decorateRequest('principal', null);
  app.decorateRequest('org', null as never);
  app.decorateRequest('orgPermissions', null as never);
  installErrorHandling(app);
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

  await app.register(healthRoutes);
  await app.register(wellKnownRoutes);
  await app.register(filesRoutes);
  // Modules: one line each, in dependency order.
  // The issuer's browser-facing routes, the only ones that read or set cookies (sessions, the
  // interaction binding): the cookie hooks run on their requests only, not on every API call.
  await app.register(async (issuer) => {
    await issuer.register(cookie);
    await issuer.register(tokenRoutes);
    await issuer.register(signinRoutes);
    await issuer.register(providerRoutes);
  });
  await app.register(webhooksRoutes);
  await app.register(orgsRoutes);
  await app.register(invitationAcceptRoutes);
  await app.register(brandsModule);
  await app.register(tokenGatesRoutes);
  await app.register(usersRoutes);
  await app.register(consoleRoutes);

  if (opts.ownsContext !== false) app.addHook('onClose', async () => closeContext(ctx));
  return app;
}
