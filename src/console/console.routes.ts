import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifySchema } from 'fastify';

/** Where `scripts/build-console.mjs` writes the bundle. */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

/**
 * The console's Content-Security-Policy: its own scripts and styles only (no inline script, no other
 * origin); images also from the files origin (uploaded logos and icons) and `data:` (the styling
 * system's inline icons); API calls to this origin only; never framed.
 */
export function consoleCsp(filesBaseUrl: string): string {
  const files = new URL(filesBaseUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: ${files}`,
    "connect-src 'self'",
    // The brand editor's preview: the hosted sign-in page of this origin in a frame.
    "frame-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Serves the console under `/console`: hashed assets cached for a year, and `index.html` (never
 * cached, so a new build is picked up) for every other console route, `/console/callback` included,
 * where the browser app takes over.
 */
export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const csp = consoleCsp(app.ctx.config.filesBaseUrl);
  await app.register(fastifyStatic, {
    root: join(CONSOLE_DIST, 'assets'),
    prefix: '/console/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: 365 * 24 * 3600 * 1000,
    setHeaders: (reply) => {
      reply.header('content-security-policy', csp);
    },
  });

  const sendIndex = async (reply: FastifyReply) => {
    reply.header('content-security-policy', csp).header('cache-control', 'no-cache');
    const html = await readFile(join(CONSOLE_DIST, 'index.html'), 'utf8').catch(() => null);
    if (html === null)
      return reply
        .code(503)
        .type('text/html; charset=utf-8')
        .send(
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>' +
            '<body><h1>The console has not been built</h1><p>Run <code>npm install</code> (or ' +
            '<code>node scripts/build-console.mjs</code>) and reload.</p></body></html>',
        );
    return reply.type('text/html; charset=utf-8').send(html);
  };

  // Hosted pages, not API operations: left out of the OpenAPI document.
  const page = { schema: { hide: true } as FastifySchema };
  app.get('/console', page, async (_req, reply) => reply.redirect('/console/', 302));
  app.get('/console/*', page, async (_req, reply) => sendIndex(reply));
};
