import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { defaults, rateLimits } from '../../config/defaults.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { ApiError, validationFailed } from '../../http/errors.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { prepareFile, readFile, storePrepared } from './files.service.js';
import { routeDoc } from '../../http/route-doc.js';

const doc = routeDoc('Files');
const mib = (bytes: number) => bytes / (1024 * 1024);

const FileTrackerWithId = Type.Object({
  id: Type.String(),
  fileKey: Type.String(),
  url: Type.String(),
  contentType: Type.String(),
  bytes: Type.Number(),
});

/** Uploads (PNG, JPEG, WebP, sanitised SVG; at most 2 MB) and their public URLs. */
export const filesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  await app.register(multipart, {
    limits: { fileSize: defaults.maxFileBytes, files: 1, fields: 0, parts: 2 },
  });

  app.post(
    '/files',
    {
      schema: {
        ...doc('uploadFile', 'Upload an image (PNG, JPEG, WebP or SVG, at most 2 MB)', {
          consumes: ['multipart/form-data'],
          docBody: Type.Object({ file: Type.String({ format: 'binary', description: 'the image' }) }),
          description:
            'SVG uploads are sanitised. Answers the public URL of the stored file. Stored bytes are ' +
            `limited to ${mib(rateLimits.fileUploadBytes.points)} MiB a day per user and ` +
            `${mib(rateLimits.fileUploadSourceBytes.points)} MiB a day per network source (429 past either).`,
        }),
        response: { 201: FileTrackerWithId, ...authErrors, ...errorResponses(413, 415) },
      },
      // Uploads are profile pictures and brand images.
      config: { apiKeyScope: ['users:write', 'org.brands.edit'] },
      preHandler: [authenticate(ctx), ctx.rateLimits.guard('fileUpload', (req) => req.principal?.userId)],
    },
    async (req, reply) => {
      if (!req.isMultipart())
        throw new ApiError(415, 'unsupported_media_type', 'send the file as multipart/form-data');
      const part = await req.file();
      if (!part)
        throw validationFailed([{ field: 'file', code: 'required', message: 'a file part is required' }]);
      // Checked and cleaned first: the budgets are spent on what would be stored, and a refused
      // upload spends nothing.
      const file = await prepareFile(await part.toBuffer(), defaults.maxFileBytes);
      // Storage is spent per account and per network source, in both or in neither. The
      // RateLimit-* headers stay the upload count's; a refusal carries its own with Retry-After.
      const userId = principalOf(req).userId;
      const giveBack = await ctx.rateLimits.spend(
        [
          { name: 'fileUploadBytes', key: userId },
          { name: 'fileUploadSourceBytes', key: ctx.rateLimits.source(req) },
        ],
        file.data.length,
      );
      let tracker: Awaited<ReturnType<typeof storePrepared>>;
      try {
        tracker = await storePrepared(ctx.db, ctx.config, ctx.clock, file, userId);
      } catch (err) {
        await giveBack();
        throw err;
      }
      return reply.code(201).send(tracker);
    },
  );

  app.get(
    '/files/:fileKey',
    {
      schema: {
        ...doc('getFile', 'Download an uploaded file (public)'),
        params: Type.Object({ fileKey: Type.String({ pattern: '^[A-Za-z0-9]{24}\\.(png|jpg|webp|svg)$' }) }),
        response: {
          // Fastify's per-media-type form; the bytes are sent as they are (never serialised).
          200: Type.Unsafe<Buffer>({
            content: Object.fromEntries(
              ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'].map((type) => [
                type,
                { schema: Type.String({ format: 'binary' }) },
              ]),
            ),
          }),
          ...errorResponses(400, 404),
        },
      },
    },
    async (req, reply) => {
      const file = await readFile(ctx.db, req.params.fileKey);
      return reply
        .header('content-type', file.content_type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
        .send(file.data);
    },
  );
};
