import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { guardDocs, routeDoc } from '../http/route-doc.js';
import { buildDocument, type RouteRecord } from './document.js';

const doc = routeDoc('Reference');

/** The reference page: swagger-ui-dist's files, served from the package (no outside request). */
const DOCS_ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
};

/** Only our own scripts and styles; the page fetches nothing but /openapi.json. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<main id="swagger-ui"></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

// An external script, so the CSP needs no 'unsafe-inline'. No validator badge (an outside request).
const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  defaultModelsExpandDepth: 0,
});
`;

const assetCache = new Map<string, Buffer>();
async function asset(name: string): Promise<Buffer> {
  let bytes = assetCache.get(name);
  if (!bytes) {
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    bytes = await readFile(join(dir, DOCS_ASSETS[name].file));
    assetCache.set(name, bytes);
  }
  return bytes;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered (for the contract test: each is in the document or a hosted page). */
    apiRoutes: RouteRecord[];
  }
}

export interface OpenApiOptions {
  version: string;
  baseUrl: string;
}

/**
 * Collects every route as it is registered and, once the app is ready, builds the OpenAPI document
 * and serialises it once; `GET /openapi.json` sends those bytes. Call before any route is registered
 * (the onRoute hook sees only later routes). The admin mirror registers the org routes a second time:
 * their operation ids get an `admin` prefix so every id stays unique.
 */
export function installOpenApi(app: FastifyInstance, opts: OpenApiOptions): { routes: RouteRecord[] } {
  const routes: RouteRecord[] = [];
  let bytes: Buffer | undefined;

  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    const mirror = guardDocs(route.preHandler).some((g) => g.kind === 'orgPermission' && g.admin);
    if (schema?.operationId && mirror && !schema.operationId.startsWith('admin')) {
      route.schema = {
        ...schema,
        operationId: `admin${capitalize(schema.operationId)}`,
        summary: `${schema.summary} (admin mirror)`,
      };
    }
    for (const method of Array.isArray(route.method) ? route.method : [route.method])
      routes.push({ method, url: route.url, schema: route.schema, preHandler: route.preHandler });
  });

  app.decorate('apiRoutes', routes);
  app.addHook('onReady', async () => {
    bytes = Buffer.from(JSON.stringify(buildDocument(routes, opts)));
  });

  app.get(
    '/openapi.json',
    {
      schema: {
        ...doc('getOpenApiDocument', 'This OpenAPI 3.1 document', {
          description:
            'Generated at start from the route schemas; the same bytes on every request. Browse it at `/docs`.',
        }),
        response: { 200: { type: 'object' } },
      },
    },
    (_req, reply) => {
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .header('access-control-allow-origin', '*')
        .send(bytes);
    },
  );

  const page = { schema: { hide: true } };
  app.get('/docs', page, (_req, reply) => {
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', DOCS_CSP)
      .header('cache-control', 'no-cache')
      .send(DOCS_HTML);
  });
  app.get('/docs/docs.js', page, (_req, reply) => {
    reply.header('content-type', 'text/javascript; charset=utf-8').send(DOCS_INIT);
  });
  for (const name of Object.keys(DOCS_ASSETS)) {
    app.get(`/docs/${name}`, page, async (_req, reply) =>
      reply
        .header('content-type', DOCS_ASSETS[name].type)
        .header('cache-control', 'public, max-age=86400')
        .send(await asset(name)),
    );
  }
  return { routes };
}
