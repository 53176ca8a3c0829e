import cookie from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { requestSessionHashes } from '../../oidc/signin/sessions.js';
import { endUserSession, listSessions } from './sessions.service.js';
import { requireKeyScope } from '../../http/guards.js';
import { SessionIdParams, UserSessions } from './users.schemas.js';

const doc = routeDoc('Users');
const userOf = (req: FastifyRequest) => req.principal?.userId;

/**
 * The user's browser sessions: listed across brands, ended one by one. Cookies are read here (in
 * this plugin's scope only) to mark the caller's own sessions as `current`.
 */
export const sessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  await app.register(cookie);
  const auth = authenticate(ctx);

  app.get(
    '/users/me/sessions',
    {
      schema: {
        ...doc('listMySessions', "The caller's sessions on every brand", {
          description:
            '`current` is true for the session whose cookie came with the request (false on bearer-only calls).',
        }),
        response: { 200: UserSessions, ...authErrors },
      },
      preHandler: [auth, requireKeyScope('users:read'), ctx.rateLimits.guard('usersMeRead', userOf)],
    },
    async (req) => ({ items: await listSessions(ctx, principalOf(req).userId, requestSessionHashes(req)) }),
  );

  app.delete(
    '/users/me/sessions/:id',
    {
      schema: {
        ...doc('endMySession', 'End one of the caller’s sessions', {
          description:
            'Ends it as logout does: the tokens issued in it are revoked and the apps signed in through it get back-channel logout tokens. Another user’s session is 404.',
        }),
        params: SessionIdParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(404) },
      },
      preHandler: [auth, requireKeyScope('users:write'), ctx.rateLimits.guard('usersMeWrite', userOf)],
    },
    async (req, reply) => {
      // A cookie left naming the ended session signs nobody in: no cookie to clear here.
      await endUserSession(ctx, principalOf(req).userId, req.params.id);
      return reply.code(204).send(null);
    },
  );
};
