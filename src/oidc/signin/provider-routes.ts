import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { ErrorEnvelope } from '../../http/schemas.js';
import { PROVIDER_TYPES, type ProviderType } from '../../providers/types.js';
import { isForm, sameOriginGuard } from './guards.js';
import { answerLink, providerReturn, startProviderSignIn, telegramLinkWidget } from './provider-callback.js';

const ProviderTypeSchema = Type.Enum([...PROVIDER_TYPES]);
const InteractionProviderParams = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9]{1,64}$' }),
  type: ProviderTypeSchema,
});
const CallbackParams = Type.Object({
  type: ProviderTypeSchema,
  oauthCallbackId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
});
/** Whatever the provider appends; read as strings, bounded. */
const CallbackFields = Type.Record(
  Type.String({ maxLength: 64 }),
  Type.Union([
    Type.String({ maxLength: 8192 }),
    Type.Array(Type.String({ maxLength: 8192 }), { maxItems: 4 }),
  ]),
);
const Page = {
  200: Type.String(),
  302: Type.Null(),
  303: Type.Null(),
  400: Type.String(),
  404: Type.String(),
};

function toSearchParams(fields: Record<string, string | string[]> | undefined): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(fields ?? {})) out.set(k, Array.isArray(v) ? (v[0] ?? '') : v);
  return out;
}

/**
 * Upstream sign-in's routes: the trip out (`/interactions/:id/providers/:type`), the return
 * (`/oauth/:type/:oauthCallbackId/callback`, GET and Apple's form_post), a link's confirmation and
 * the console's Telegram link widget. What they do is in provider-callback.ts.
 */
export const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;

  app.get(
    '/interactions/:id/providers/:type',
    {
      schema: { hide: true, params: InteractionProviderParams, response: { ...Page, 429: ErrorEnvelope } },
      preHandler: ctx.rateLimits.guard('providerStart', (req) => ctx.rateLimits.source(req)),
    },
    (req, reply) => startProviderSignIn(ctx, req, reply, req.params.id, req.params.type as ProviderType),
  );

  /**
   * A foreign `Origin` or a cross-site `Sec-Fetch-Site` is refused (the device forms' guard);
   * `Origin: null` alone proves nothing either way, so the flow cookie and the CSRF token derived from
   * it are what prove the form is ours.
   */
  const linkFormOrigin = sameOriginGuard(ctx);

  // The confirmation page's form: the browser that started the link (flow cookie), with the page's
  // CSRF token, from our own origin. Checked completely before the pending link is answered.
  app.post(
    '/oauth/link/:linkId/confirm',
    {
      onRequest: linkFormOrigin,
      preValidation: async (req) => {
        if (!isForm(req))
          throw new ApiError(415, 'unsupported_media_type', "send the confirmation page's form");
      },
      schema: {
        hide: true,
        params: Type.Object({ linkId: Type.String({ pattern: '^pst_[A-Za-z0-9]{1,64}$' }) }),
        body: Type.Object(
          {
            csrf_token: Type.String({ minLength: 1, maxLength: 128 }),
            decision: Type.Union([Type.Literal('confirm'), Type.Literal('cancel')]),
          },
          { additionalProperties: false },
        ),
        response: { ...Page, 403: Type.String(), 409: Type.String(), 415: ErrorEnvelope },
      },
    },
    (req, reply) =>
      answerLink(ctx, req, reply, {
        linkId: req.params.linkId,
        csrfToken: req.body.csrf_token,
        decision: req.body.decision,
      }),
  );

  const callbackSchema = {
    params: CallbackParams,
    hide: true,
    response: { ...Page, 409: Type.String() },
  };
  const route = (params: { type: string; oauthCallbackId: string }) => ({
    type: params.type as ProviderType,
    oauthCallbackId: params.oauthCallbackId,
  });
  app.get(
    '/oauth/:type/:oauthCallbackId/callback',
    { schema: { ...callbackSchema, querystring: CallbackFields } },
    (req, reply) =>
      providerReturn(ctx, req, reply, {
        ...route(req.params),
        fields: toSearchParams(req.query),
        status: 302,
      }),
  );
  // Apple's response_mode=form_post; 303 so the browser follows with a GET.
  app.post(
    '/oauth/:type/:oauthCallbackId/callback',
    { schema: { ...callbackSchema, body: CallbackFields } },
    (req, reply) =>
      providerReturn(ctx, req, reply, {
        ...route(req.params),
        fields: toSearchParams(req.body),
        status: 303,
      }),
  );

  // The console's link of a Telegram account: binds the browser, then shows the widget.
  app.get(
    '/oauth/telegram/:oauthCallbackId/widget',
    {
      schema: {
        params: Type.Object({ oauthCallbackId: CallbackParams.properties.oauthCallbackId }),
        hide: true,
        querystring: Type.Object({ binding: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: Page,
      },
    },
    (req, reply) =>
      telegramLinkWidget(ctx, req, reply, {
        oauthCallbackId: req.params.oauthCallbackId,
        binding: req.query.binding,
      }),
  );
};
