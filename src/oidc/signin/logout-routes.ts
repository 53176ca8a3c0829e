import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { routeDoc } from '../../http/route-doc.js';
import { OAuthErrorBody } from '../../http/schemas.js';
import { sendErrorPage, sendSignedOutPage } from '../pages/html.js';
import { requestLocale } from '../pages/i18n.js';
import { pageBrand } from '../pages/page-data.js';
import { type LogoutParams, rpInitiatedLogout } from './logout.js';
import { clearSessionCookie, requestSessionCookies } from './sessions.js';

const oauth = routeDoc('OAuth');

const Param = (description: string, maxLength = 2048) =>
  Type.Optional(Type.String({ maxLength, description }));

/** RP-Initiated Logout 1.0 §2: the query of a GET, the form of a POST. */
const LogoutRequest = Type.Object({
  id_token_hint: Param('an ID token this service issued to the app (an expired one is fine)', 8192),
  client_id: Param('the app, when no id_token_hint is sent', 200),
  post_logout_redirect_uri: Param("one of the app's postLogoutRedirectUris, exactly"),
  state: Param('returned on the post-logout redirect'),
  logout_hint: Param('who is signing out (informational)'),
  ui_locales: Param("the signed-out page's preferred languages", 200),
});

const Html = (description: string) => Type.String({ description });

const schema = (operationId: string, summary: string) => ({
  ...oauth(operationId, summary, {
    description:
      "Ends the browser's session of the app's brand (every session of the browser when neither `id_token_hint` nor `client_id` is sent), revokes the refresh and access tokens issued in it and sends back-channel logout tokens to the apps that were signed in through it. Then 302 to `post_logout_redirect_uri` with `state`, or the signed-out page. An unregistered `post_logout_redirect_uri`, an unknown client or an `id_token_hint` this service did not issue is an HTML page with status 400 and ends nothing.",
  }),
  response: {
    200: Html('the signed-out page'),
    302: Type.Null(),
    303: Type.Null({
      description:
        'a POST that brought no session cookie (a cross-site form post: SameSite=Lax cookies stay behind) is answered with a GET of the same request, which a top-level navigation sends them with',
    }),
    // The error page; a request its schema refuses (a parameter too long) gets the OAuth JSON error.
    400: Type.Unsafe<unknown>({
      description: 'the error page: nothing was ended',
      content: {
        'text/html': { schema: Type.String() },
        'application/json': { schema: OAuthErrorBody },
      },
    }),
    429: OAuthErrorBody,
  },
});

async function answer(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, p: LogoutParams) {
  reply.header('cache-control', 'no-store');
  const outcome = await rpInitiatedLogout(ctx, req, p);
  const locale = requestLocale(req, p.ui_locales);
  if (outcome.kind === 'error') {
    const brand = outcome.brandId ? await pageBrand(ctx, outcome.brandId) : null;
    return sendErrorPage(reply, 400, outcome.error, outcome.description, undefined, { brand, locale });
  }
  for (const brandId of outcome.brandIds) clearSessionCookie(ctx, reply, brandId);
  if (outcome.location) return reply.redirect(outcome.location, 302);
  const brand = outcome.brandId ? await pageBrand(ctx, outcome.brandId) : null;
  return sendSignedOutPage(reply, { brand, locale });
}

/** The end_session_endpoint with the request's parameters as its query. */
function logoutUrl(ctx: AppContext, p: LogoutParams): string {
  const url = new URL(`${ctx.config.issuer}/oauth2/logout`);
  for (const [name, value] of Object.entries(p)) {
    if (typeof value === 'string') url.searchParams.set(name, value);
  }
  return url.toString();
}

/** GET and POST /oauth2/logout: the issuer's end_session_endpoint. */
export const logoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const limit = ctx.rateLimits.guard('authorize', (req) => ctx.rateLimits.source(req));
  app.get(
    '/oauth2/logout',
    {
      schema: {
        ...schema('endSession', 'Sign out (OpenID RP-Initiated Logout)'),
        querystring: LogoutRequest,
      },
      preHandler: limit,
    },
    (req, reply) => answer(ctx, req, reply, req.query),
  );
  app.post(
    '/oauth2/logout',
    {
      schema: {
        ...schema('endSessionPost', 'Sign out by a form post (OpenID RP-Initiated Logout)'),
        consumes: ['application/x-www-form-urlencoded'],
        body: LogoutRequest,
      },
      preHandler: limit,
    },
    (req, reply) => {
      const p = req.body ?? {};
      if (requestSessionCookies(req).length > 0) return answer(ctx, req, reply, p);
      // Browsers keep SameSite=Lax cookies out of a cross-site POST, so this request cannot see the
      // session it is meant to end; the same request as a GET navigation can.
      reply.header('cache-control', 'no-store').redirect(logoutUrl(ctx, p), 303);
    },
  );
};
