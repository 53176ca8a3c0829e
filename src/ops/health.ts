import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';

/** /healthz: the process answers. /readyz: the database answers too. Neither is logged nor counted. */
export const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (req, reply) => {
    try {
      await sql`select 1`.execute(app.ctx.db);
      return { status: 'ok' };
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, 'readiness check failed');
      reply.errorCode = 'service_unavailable';
      return reply
        .code(503)
        .send({ error: { code: 'service_unavailable', message: 'database unreachable' } });
    }
  });
};
