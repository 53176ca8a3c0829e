import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ping } from '../db/index.js';
import { routeDoc } from '../http/route-doc.js';
import { ErrorEnvelope } from '../http/schemas.js';

const doc = routeDoc('Operations');
const Status = Type.Object({ status: Type.Literal('ok') });

/** /healthz: the process answers. /readyz: the database answers too. Neither is logged nor counted. */
export const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        ...doc('getHealth', 'Liveness: the process answers', {
          description: 'Answers 200 while the process runs; for a liveness probe.',
        }),
        response: { 200: Status },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        ...doc('getReadiness', 'Readiness: the database answers too', {
          description:
            'Answers 503 `service_unavailable` while the database does not answer; for a readiness probe.',
        }),
        response: { 200: Status, 503: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      try {
        await ping(app.ctx.db);
        return { status: 'ok' };
      } catch (err) {
        req.log.warn({ err: (err as Error).message }, 'readiness check failed');
        reply.errorCode = 'service_unavailable';
        return reply
          .code(503)
          .send({ error: { code: 'service_unavailable', message: 'database unreachable' } });
      }
    },
  );
};
