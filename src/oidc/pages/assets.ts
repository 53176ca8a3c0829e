import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';

/**
 * The hosted pages' own static files (stylesheet, scripts, default favicon), read once at start
 * and served from `/static/<name>?v=<hash>`: the hash changes with the content, so browsers may
 * keep them for a year. Pages load the scripts by URL with their CSP nonce, never inline.
 */

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

const FILES = ['pages.css', 'signin.js', 'back.js', 'favicon.svg'] as const;
export type PageScript = 'signin' | 'back';

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

const assets = new Map<string, Asset>(
  FILES.map((name) => {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    return [name, { body, type: TYPES[name.split('.').pop() as string], version }];
  }),
);

/** The versioned URL path of a static page file. */
export function assetUrl(name: string): string {
  const asset = assets.get(name);
  if (!asset) throw new Error(`unknown page asset ${name}`);
  return `/static/${name}?v=${asset.version}`;
}

export const pageAssetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/static/:file',
    {
      schema: {
        hide: true,
        params: Type.Object({ file: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { 200: Type.Unknown(), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const asset = assets.get(req.params.file);
      if (!asset) throw notFound('static file');
      const cache =
        req.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=300';
      return reply
        .header('cache-control', cache)
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'same-origin')
        .type(asset.type)
        .send(asset.body);
    },
  );
};
