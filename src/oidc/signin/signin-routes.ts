import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { ErrorEnvelope, OAuthErrorBody, errorResponses } from '../../http/schemas.js';
import { authorize } from './authorize.js';
import { requestSessionCookies } from './sessions.js';
import { deviceDecision, devicePage } from './device-pages.js';
import { isForm, requireJson, sameOriginGuard, wantsJson } from './guards.js';
import { flowBrowserMatches, setFlowCookie } from './flow-state.js';
import {
  decideConsent,
  loadInteraction,
  loadStartedInteraction,
  requireStartingBrowser,
  verifyWallet,
  viewInteraction,
  walletChallenge,
} from './interactions.js';
import { loadClient } from '../clients.js';
import { sendErrorPage, sendExpiredSigninPage } from '../pages/html.js';
import { providerNotice, requestLocale, translator } from '../pages/i18n.js';
import { pageBrand, signedInAs } from '../pages/page-data.js';
import { renderSigninPage } from '../pages/signin-page.js';
import { unmetRequirementPage } from './requirement.js';
import { routeDoc } from '../../http/route-doc.js';

const oauth = routeDoc('OAuth');
const interactionDoc = routeDoc('Interactions');
/** The headless interaction API: what every operation of it requires of its caller. */
const interaction = (operationId: string, summary: string, extra: { description?: string } = {}) =>
  interactionDoc(operationId, summary, {
    description: [
      extra.description,
      'For a sign-in UI of your own, in the browser that started the sign-in: the interaction binding cookie set by `/oauth2/authorize` must come along (another browser is refused). POSTs take JSON only and, when an `Origin` is sent, only this origin (else 403).',
    ]
      .filter(Boolean)
      .join('\n\n'),
  });
const device = routeDoc('Device');

/** The query of /oauth2/authorize as documented (the handler reads the raw query). */
const AuthorizeQuery = Type.Object({
  response_type: Type.Literal('code'),
  client_id: Type.String(),
  redirect_uri: Type.String(),
  scope: Type.String({ description: 'space-separated; must include `openid`' }),
  state: Type.Optional(Type.String()),
  nonce: Type.Optional(Type.String()),
  code_challenge: Type.Optional(
    Type.String({ description: 'base64url SHA-256 of the verifier; required for public apps' }),
  ),
  code_challenge_method: Type.Optional(Type.Literal('S256')),
  prompt: Type.Optional(Type.String({ description: 'none, login, consent or select_account' })),
  login_hint: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String({ description: 'skip the method choice and go to this provider' })),
  max_age: Type.Optional(Type.String({ description: 'seconds; an older sign-in is asked again' })),
  id_token_hint: Type.Optional(
    Type.String({ description: 'an ID token of the user expected to be signed in' }),
  ),
  ui_locales: Type.Optional(Type.String()),
});

/** The authorize parameters as the parser hands them over (a repeated one as a list, then refused). */
const AuthorizeParams = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));

/** An OAuth error as JSON, or the error page a browser sees. */
const OAuthErrorOrPage = Type.Unsafe<unknown>({
  content: {
    'application/json': { schema: OAuthErrorBody },
    'text/html': { schema: Type.String() },
  },
});

const InteractionId = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9]{1,64}$' }) });

const InteractionViewSchema = Type.Object({
  id: Type.String(),
  step: Type.Union([Type.Literal('signin'), Type.Literal('consent')]),
  brand: Type.Object({
    slug: Type.String(),
    name: Type.String(),
    logoUrl: Type.Optional(Type.String()),
    primaryColor: Type.Optional(Type.String()),
    privacyPolicyUrl: Type.Optional(Type.String()),
    termsUrl: Type.Optional(Type.String()),
  }),
  app: Type.Object({ clientId: Type.String(), name: Type.String() }),
  scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  providers: Type.Array(Type.String()),
  expiresAt: Type.String(),
});

/** Base64 strings of the proof: bounded so a body cannot make us hash megabytes. */
const Base64Field = (max: number) => Type.String({ minLength: 1, maxLength: max });

const HtmlOrRedirect = { 200: Type.String(), 302: Type.Null(), 400: Type.String(), 404: Type.String() };

/** The GET form of a POSTed authorization request: the same parameters, repeated ones kept. */
function authorizeGetUrl(ctx: AppContext, form: Record<string, unknown>): string {
  const url = new URL(`${ctx.config.issuer}/oauth2/authorize`);
  for (const [name, value] of Object.entries(form))
    for (const v of Array.isArray(value) ? value : [value])
      if (typeof v === 'string') url.searchParams.append(name, v);
  return url.toString();
}

/**
 * The sign-in side of the issuer: /oauth2/authorize, the headless interaction API, the hosted
 * sign-in page and the device pages.
 */
export const signinRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const sameOrigin = sameOriginGuard(ctx);
  const walletLimit = ctx.rateLimits.guard('signinWallet', (req) => ctx.rateLimits.source(req));

  const authorizeLimit = ctx.rateLimits.guard('authorize', (req) => ctx.rateLimits.source(req));
  // GET with the query, or POST with the same parameters as a form (OIDC Core §3.1.2.1): a
  // top-level form post from the app's page, so the interaction routes' Origin rule does not apply.
  for (const method of ['GET', 'POST'] as const) {
    const get = method === 'GET';
    app.route({
      method,
      url: '/oauth2/authorize',
      schema: {
        ...oauth(
          get ? 'authorize' : 'authorizePost',
          get
            ? 'Start a sign-in (OAuth 2.0 authorization code with PKCE)'
            : 'Start a sign-in, parameters as a form (OpenID Connect Core §3.1.2.1)',
          {
            ...(get ? { docQuery: AuthorizeQuery } : {}),
            description:
              'Redirects (302) to the hosted sign-in, or back to `redirect_uri` with `code` and `state` (or an OAuth error). An unknown client or redirect URI is never redirected: 400, as JSON when the caller asks for it, else an HTML page. Public apps must send PKCE (`S256`). `request` and `request_uri` are refused (`request_not_supported`, `request_uri_not_supported`); `id_token_hint` must name the signed-in user (else `login_required` with `prompt=none`, or a fresh sign-in). POST takes the same parameters as a form body; a POST that brings no session cookie (a cross-site form post, which browsers send without SameSite=Lax cookies) answers 303 to the same request as a GET, which carries them.',
          },
        ),
        // Parsed from the raw query (or form) by the handler, so duplicates can be refused.
        ...(get ? { querystring: AuthorizeParams } : { body: AuthorizeParams }),
        response: {
          302: Type.Null(),
          ...(get ? {} : { 303: Type.Null() }),
          400: OAuthErrorOrPage,
          429: OAuthErrorBody,
        },
      },
      // A POST with no body is answered like a GET without parameters (the error page).
      preValidation: async (req) => {
        req.body ??= {};
      },
      preHandler: authorizeLimit,
      handler: async (req, reply) => {
        // Browsers keep SameSite=Lax cookies out of a cross-site POST, so an app's form post cannot
        // show us the browser's session (no single sign-on; prompt=none always login_required). The
        // same request as a GET navigation can, as logout does.
        if (!get && requestSessionCookies(req).length === 0)
          return reply
            .header('cache-control', 'no-store')
            .redirect(authorizeGetUrl(ctx, req.body as Record<string, unknown>), 303);
        const outcome = await authorize(ctx, req);
        reply.header('cache-control', 'no-store');
        if (outcome.kind === 'redirect') {
          if (outcome.binding)
            setFlowCookie(
              ctx,
              reply,
              'interaction',
              outcome.binding.interactionId,
              outcome.binding.value,
              defaults.interactionTtl,
            );
          return reply.redirect(outcome.location, 302);
        }
        if (wantsJson(req)) {
          reply.errorCode = outcome.error;
          return reply.code(400).send({ error: outcome.error, error_description: outcome.description });
        }
        // The redirect URI is not trusted here, but a known client's brand themes the page.
        const query = ((get ? req.query : req.body) ?? {}) as Record<string, string | string[]>;
        const clientId = typeof query.client_id === 'string' ? query.client_id : undefined;
        const client = clientId && clientId.length <= 200 ? await loadClient(ctx, clientId) : null;
        const uiLocales = typeof query.ui_locales === 'string' ? query.ui_locales : undefined;
        return sendErrorPage(reply, 400, outcome.error, outcome.description, undefined, {
          brand: client ? await pageBrand(ctx, client.brandId) : null,
          locale: requestLocale(req, uiLocales),
        });
      },
    });
  }

  app.get(
    '/interactions/:id',
    {
      schema: {
        ...interaction('getInteraction', 'What a sign-in in progress asks for (headless sign-in)', {
          description:
            'For a sign-in UI of your own: the brand, the app, the scopes and the sign-in methods.',
        }),
        params: InteractionId,
        response: { 200: InteractionViewSchema, ...errorResponses(400, 403, 404) },
      },
    },
    async (req, reply) => {
      const loaded = await loadInteraction(ctx, req.params.id);
      requireStartingBrowser(req, loaded);
      const view = await viewInteraction(ctx, loaded);
      return reply.header('cache-control', 'no-store').send(view);
    },
  );

  const postErrors = errorResponses(400, 401, 403, 404, 409, 415, 429);
  /**
   * Steps that check the app's required gate policy (right after sign-in, and again before a consent
   * is recorded): 503 `temporarily_unavailable` when the chain cannot be read. The browser keeps its
   * session and the interaction its user: the sign-in goes on from its next step once the chain answers.
   */
  const gatedPostErrors = errorResponses(400, 401, 403, 404, 409, 415, 429, 503);
  /** The state-changing interaction API: our origin (when sent) and JSON bodies only. */
  const jsonPost = { onRequest: sameOrigin, preValidation: requireJson };
  const walletPost = { ...jsonPost, preHandler: walletLimit };

  app.post(
    '/interactions/:id/wallet/challenge',
    {
      ...walletPost,
      schema: {
        ...interaction('createInteractionWalletChallenge', 'A message for the wallet to sign'),
        params: InteractionId,
        body: Type.Object(
          { address: Type.String({ minLength: 1, maxLength: 64 }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ message: Type.String(), expiresAt: Type.String() }), ...postErrors },
      },
    },
    async (req, reply) => {
      const loaded = await loadStartedInteraction(ctx, req.params.id);
      requireStartingBrowser(req, loaded);
      return reply
        .header('cache-control', 'no-store')
        .send(await walletChallenge(ctx, loaded, req.body.address));
    },
  );

  app.post(
    '/interactions/:id/wallet/verify',
    {
      ...walletPost,
      schema: {
        ...interaction('verifyInteractionWallet', 'Sign in with the signed challenge'),
        params: InteractionId,
        body: Type.Object(
          {
            address: Type.String({ minLength: 1, maxLength: 64 }),
            signature: Base64Field(200),
            signedMessage: Base64Field(4096),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            step: Type.Union([Type.Literal('consent'), Type.Literal('done')]),
            redirectTo: Type.Optional(Type.String()),
          }),
          ...gatedPostErrors,
        },
      },
    },
    async (req, reply) => {
      const loaded = await loadStartedInteraction(ctx, req.params.id);
      requireStartingBrowser(req, loaded);
      const result = await verifyWallet(ctx, req, reply, loaded, req.body);
      return reply.header('cache-control', 'no-store').send(result);
    },
  );

  app.post(
    '/interactions/:id/consent',
    {
      ...jsonPost,
      schema: {
        ...interaction('decideInteractionConsent', 'Allow or deny the scopes the app asks for'),
        params: InteractionId,
        body: Type.Object(
          { decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ redirectTo: Type.String() }), ...gatedPostErrors },
      },
    },
    async (req, reply) => {
      const loaded = await loadInteraction(ctx, req.params.id);
      requireStartingBrowser(req, loaded);
      const result = await decideConsent(ctx, req, loaded, req.body.decision);
      return reply.header('cache-control', 'no-store').send(result);
    },
  );

  app.get(
    '/signin/:id',
    {
      schema: {
        hide: true,
        params: InteractionId,
        // `error`: why an upstream provider sent the browser back (the page's catalog has a line for each).
        querystring: Type.Object({ error: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: HtmlOrRedirect,
      },
    },
    async (req, reply) => {
      try {
        const loaded = await loadInteraction(ctx, req.params.id);
        const view = await viewInteraction(ctx, loaded);
        const userId = loaded.row.user_id;
        const locale = requestLocale(req, loaded.params.uiLocales);
        return renderSigninPage(reply, view, {
          preselected: loaded.params.provider,
          baseUrl: ctx.config.baseUrl,
          notice: providerNotice(translator(locale), req.query.error),
          locale,
          // Who is signed in, only to the browser that signed in (the URL alone tells nothing).
          who:
            userId && flowBrowserMatches(req, 'interaction', loaded.row.id, loaded.row.binding_hash)
              ? await signedInAs(ctx, userId)
              : null,
          brand: await pageBrand(ctx, loaded.client.brandId),
        });
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          return sendExpiredSigninPage(reply, { locale: requestLocale(req) });
        }
        throw err;
      }
    },
  );

  app.get(
    '/signin/:id/unmet',
    {
      schema: {
        hide: true,
        params: InteractionId,
        response: { ...HtmlOrRedirect, 403: Type.String() },
      },
    },
    async (req, reply) => {
      try {
        return await unmetRequirementPage(ctx, req, reply, await loadInteraction(ctx, req.params.id));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404)
          return sendExpiredSigninPage(reply, { locale: requestLocale(req) });
        throw err;
      }
    },
  );

  app.get(
    '/device',
    {
      schema: {
        hide: true,
        querystring: Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { ...HtmlOrRedirect, 429: ErrorEnvelope, 503: Type.String() },
      },
      preHandler: ctx.rateLimits.guard('devicePage', (req) => ctx.rateLimits.source(req)),
    },
    async (req, reply) => devicePage(ctx, req, reply, req.query.user_code?.trim() || undefined),
  );

  const DeviceBody = Type.Object(
    {
      user_code: Type.String({ minLength: 1, maxLength: 64 }),
      csrf_token: Type.Optional(Type.String({ maxLength: 128 })),
    },
    { additionalProperties: false },
  );
  /** JSON callers get the REST envelope; the hosted page's form gets the same error as a page. */
  const ErrorOrPage = Type.Unsafe<unknown>({
    content: {
      'application/json': { schema: ErrorEnvelope },
      'text/html': { schema: Type.String() },
    },
  });
  const deviceErrors = Object.fromEntries(
    [400, 401, 403, 404, 409, 415, 429, 503].map((status) => [status, ErrorOrPage]),
  );
  for (const decision of ['approve', 'deny'] as const) {
    app.post(
      `/device/${decision}`,
      {
        onRequest: sameOrigin,
        schema: {
          ...device(
            `${decision}Device`,
            `${decision === 'approve' ? 'Approve' : 'Deny'} a device sign-in by its user code`,
            {
              consumes: ['application/json', 'application/x-www-form-urlencoded'],
              description:
                'For a signed-in browser (the session cookie). A form post (the hosted page) answers an HTML page; JSON answers `{ status }`.',
              rateLimits: ['deviceUserCode'],
            },
          ),
          body: DeviceBody,
          response: {
            200: Type.Union([Type.Object({ status: Type.String() }), Type.String()]),
            ...deviceErrors,
          },
        },
      },
      async (req, reply) => deviceDecision(ctx, req, reply, req.body, decision, isForm(req)),
    );
  }
};
