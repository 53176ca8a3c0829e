import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CONSOLE_BRAND_ID } from '../bootstrap.js';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { authenticate, principalOf } from '../http/auth.js';
import { ApiError, forbidden } from '../http/errors.js';
import { ErrorEnvelope, authErrors, errorResponses } from '../http/schemas.js';
import { sha256 } from '../lib/hash.js';
import { resolveConnectionCredentials } from '../modules/connections/connections.service.js';
import { linkIdentity } from '../providers/accounts.js';
import {
  PROVIDER_ERROR_MESSAGES,
  type ProviderFailure,
  ProviderFlowError,
  oauthIdentity,
  startOAuth,
  startTelegram,
  telegramIdentity,
} from '../providers/flow.js';
import { PROVIDER_LABELS } from '../providers/index.js';
import { sendLinkResultPage, sendTelegramWidgetPage } from '../providers/pages.js';
import type { ExternalIdentity, ProviderTokens } from '../providers/provider.js';
import { completeProviderSignIn, recordFailedSignIn, requestMeta } from '../providers/signin.js';
import {
  consumeProviderState,
  deleteExpiredProviderStates,
  type ProviderStateRow,
} from '../providers/states.js';
import { TELEGRAM_FIELDS } from '../providers/telegram.js';
import { PROVIDER_TYPES, type ProviderType } from '../providers/types.js';
import { browserMatches, clearBindingCookie } from './interactions/binding.js';
import { type LoadedInteraction, loadInteraction } from './interactions/interactions.service.js';
import { sendErrorPage, sendExpiredSigninPage } from './pages/html.js';
import { routeDoc } from '../http/route-doc.js';

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

/** The cookie binding a browser to the Telegram trip it started (the widget carries no state). */
const TELEGRAM_COOKIE = 'gh_tg_binding';
const TELEGRAM_COOKIE_PATH = '/oauth/telegram/';

const OTHER_BROWSER =
  'This sign-in was started in another browser. Go back to the app and start again in this one.';

const STALE_STATE =
  'This sign-in attempt has expired or was already used. Go back to the app and start again.';

function brandOfInteraction(ctx: AppContext, brandId: string) {
  return ctx.db
    .selectFrom('brands')
    .select(['id', 'oauth_callback_id as oauthCallbackId'])
    .where('id', '=', brandId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

function toSearchParams(fields: Record<string, string | string[]> | undefined): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(fields ?? {})) out.set(k, Array.isArray(v) ? (v[0] ?? '') : v);
  return out;
}

function signinPageWithError(ctx: AppContext, interactionId: string, reason: ProviderFailure): string {
  return `${ctx.config.baseUrl}/signin/${encodeURIComponent(interactionId)}?error=${reason}`;
}

/**
 * Upstream sign-in: the trip out (`/interactions/:id/providers/:type`), the return
 * (`/oauth/:type/:oauthCallbackId/callback`, GET and Apple's form_post), and linking a provider to
 * the signed-in console user.
 */
export const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;

  // Sign-in states go with their interactions; link states (no interaction) are swept here.
  const sweeper = setInterval(() => {
    deleteExpiredProviderStates(ctx.db, ctx.clock.now()).catch(() =>
      app.log.warn('provider state sweep failed'),
    );
  }, defaults.tokenSweepInterval * 1000);
  sweeper.unref();
  ctx.hooks.onClose.push(() => clearInterval(sweeper));

  app.get(
    '/interactions/:id/providers/:type',
    {
      schema: { hide: true, params: InteractionProviderParams, response: { ...Page, 429: ErrorEnvelope } },
      preHandler: ctx.rateLimits.guard('providerStart', (req) => req.ip),
    },
    async (req, reply) => {
      const type = req.params.type as ProviderType;
      let loaded: LoadedInteraction;
      try {
        loaded = await loadInteraction(ctx, req.params.id);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          return sendExpiredSigninPage(reply);
        }
        throw err;
      }
      const brand = await brandOfInteraction(ctx, loaded.client.brandId);
      if (!brand) return sendErrorPage(reply, 404, 'not_found', 'This sign-in link is no longer valid.');
      const input = {
        type,
        brand,
        purpose: 'signin' as const,
        interactionId: loaded.row.id,
        expiresAt: loaded.row.expires_at,
      };
      try {
        if (type === 'telegram') {
          const t = await startTelegram(ctx, input);
          setTelegramCookie(ctx, reply, t.binding);
          return sendTelegramWidgetPage(reply, {
            botUsername: t.botUsername,
            authUrl: t.authUrl,
            title: 'Continue with Telegram',
            back: signinPageWithError(ctx, loaded.row.id, 'cancelled'),
          });
        }
        return reply.header('cache-control', 'no-store').redirect(await startOAuth(ctx, input), 302);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404)
          return sendErrorPage(reply, 404, 'not_found', err.message);
        throw err;
      }
    },
  );

  const callback = async (
    req: FastifyRequest,
    reply: FastifyReply,
    fields: URLSearchParams,
    status: 302 | 303,
  ) => {
    const { type, oauthCallbackId } = req.params as { type: ProviderType; oauthCallbackId: string };
    let raw: string | undefined;
    if (type === 'telegram') {
      raw = req.cookies?.[TELEGRAM_COOKIE];
      reply.clearCookie(TELEGRAM_COOKIE, { path: TELEGRAM_COOKIE_PATH });
    } else raw = fields.get('state') ?? undefined;
    if (!raw || raw.length > 200) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    // Redeemed before anything else is looked at: a replay finds nothing.
    const state = await consumeProviderState(ctx.db, {
      stateHash: sha256(raw),
      provider: type,
      oauthCallbackId,
      now: ctx.clock.now(),
    });
    if (!state) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    reply.header('cache-control', 'no-store');
    return state.purpose === 'link'
      ? linkCallback(req, reply, state, fields, oauthCallbackId)
      : signinCallback(req, reply, state, fields, oauthCallbackId, status);
  };

  async function identityOf(
    state: ProviderStateRow,
    fields: URLSearchParams,
    oauthCallbackId: string,
  ): Promise<{ identity: ExternalIdentity; tokens?: ProviderTokens }> {
    if (state.provider === 'telegram') {
      const telegramFields = Object.fromEntries(TELEGRAM_FIELDS.map((k) => [k, fields.get(k) ?? undefined]));
      return { identity: await telegramIdentity(ctx, state, telegramFields) };
    }
    return oauthIdentity(ctx, state, fields, oauthCallbackId);
  }

  async function signinCallback(
    req: FastifyRequest,
    reply: FastifyReply,
    state: ProviderStateRow,
    fields: URLSearchParams,
    oauthCallbackId: string,
    status: 302 | 303,
  ) {
    let loaded: LoadedInteraction;
    try {
      loaded = await loadInteraction(ctx, state.interaction_id!);
    } catch {
      return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    }
    if (loaded.client.brandId !== state.brand_id)
      return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    // Login CSRF: only the browser that started the interaction may complete it. Nothing recorded.
    if (!browserMatches(req, loaded.row)) {
      req.log.info(
        { provider: state.provider },
        'provider return from a browser not bound to the interaction',
      );
      return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER);
    }
    const fail = async (reason: ProviderFailure, claimedExternalId?: string) => {
      await recordFailedSignIn(ctx, req, {
        provider: state.provider,
        userId: loaded.row.user_id,
        claimedExternalId,
      }).catch(() => undefined);
      return reply.redirect(signinPageWithError(ctx, loaded.row.id, reason), status);
    };
    try {
      const { identity, tokens } = await identityOf(state, fields, oauthCallbackId);
      const location = await completeProviderSignIn(ctx, req, reply, loaded, {
        provider: state.provider,
        identity,
        tokens,
      });
      // Done with the browser binding unless the consent step still follows.
      if (!location.startsWith(`${ctx.config.baseUrl}/signin/`))
        clearBindingCookie(ctx, reply, loaded.row.id);
      return reply.redirect(location, status);
    } catch (err) {
      if (err instanceof ProviderFlowError) {
        req.log.info({ provider: state.provider, reason: err.reason }, 'upstream sign-in failed');
        return fail(err.reason, err.claimedExternalId);
      }
      if (err instanceof ApiError && err.status === 409) return fail('account_conflict');
      if (err instanceof ApiError && err.status === 404)
        return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
      // Never a 500 on the way back from a provider: the message only, never the error object.
      req.log.error(
        { provider: state.provider, err: { message: (err as Error)?.message } },
        'upstream sign-in error',
      );
      return fail('unexpected');
    }
  }

  async function linkCallback(
    req: FastifyRequest,
    reply: FastifyReply,
    state: ProviderStateRow,
    fields: URLSearchParams,
    oauthCallbackId: string,
  ) {
    const label = PROVIDER_LABELS[state.provider as ProviderType];
    try {
      const { identity, tokens } = await identityOf(state, fields, oauthCallbackId);
      await linkIdentity(ctx, {
        userId: state.user_id!,
        provider: state.provider,
        brandId: state.brand_id,
        identity,
        tokens,
        meta: requestMeta(req),
      });
      return sendLinkResultPage(reply, {
        status: 200,
        title: `${label} account linked`,
        message: `Your ${label} account is now linked. You can close this window.`,
        offeredWallets: identity.offeredWallets,
      });
    } catch (err) {
      let status = 400;
      let message: string = PROVIDER_ERROR_MESSAGES.unexpected;
      if (err instanceof ProviderFlowError) {
        message = err.message;
        await recordFailedSignIn(ctx, req, { provider: state.provider, userId: state.user_id }).catch(
          () => undefined,
        );
      } else if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        status = err.status;
        message =
          err.status === 409
            ? `That ${label} account is linked to another user.`
            : 'Your account was not found.';
      } else {
        req.log.error(
          { provider: state.provider, err: { message: (err as Error)?.message } },
          'provider link error',
        );
      }
      return sendLinkResultPage(reply, { status, title: `${label} account not linked`, message });
    }
  }

  const callbackSchema = {
    params: CallbackParams,
    hide: true,
    response: { ...Page, 409: Type.String() },
  };
  app.get(
    '/oauth/:type/:oauthCallbackId/callback',
    { schema: { ...callbackSchema, querystring: CallbackFields } },
    (req, reply) => callback(req, reply, toSearchParams(req.query), 302),
  );
  // Apple's response_mode=form_post; 303 so the browser follows with a GET.
  app.post(
    '/oauth/:type/:oauthCallbackId/callback',
    { schema: { ...callbackSchema, body: CallbackFields } },
    (req, reply) => callback(req, reply, toSearchParams(req.body), 303),
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
    async (req, reply) => {
      const row = await ctx.db
        .selectFrom('provider_states')
        .innerJoin('brands', 'brands.id', 'provider_states.brand_id')
        .select(['provider_states.brand_id'])
        .where('provider_states.state_hash', '=', sha256(req.query.binding))
        .where('provider_states.provider', '=', 'telegram')
        .where('provider_states.purpose', '=', 'link')
        .where('provider_states.consumed_at', 'is', null)
        .where('provider_states.expires_at', '>', ctx.clock.now())
        .where('brands.oauth_callback_id', '=', req.params.oauthCallbackId)
        .executeTakeFirst();
      if (!row) return sendErrorPage(reply, 404, 'not_found', STALE_STATE);
      const creds = await resolveConnectionCredentials(ctx, row.brand_id, 'telegram');
      if (!creds) return sendErrorPage(reply, 404, 'not_found', 'Telegram sign-in is not enabled.');
      setTelegramCookie(ctx, reply, req.query.binding);
      return sendTelegramWidgetPage(reply, {
        botUsername: (creds.config as { botUsername: string }).botUsername,
        authUrl: `${ctx.config.baseUrl}/oauth/telegram/${req.params.oauthCallbackId}/callback`,
        title: 'Link your Telegram account',
      });
    },
  );

  app.post(
    '/users/me/authentication-providers/:type/link',
    {
      schema: {
        ...routeDoc('Users')('linkAuthenticationProvider', 'Start linking a sign-in provider to the caller', {
          description:
            'Answers the provider URL to send the browser to; the link completes on the provider callback.',
        }),
        params: Type.Object({ type: ProviderTypeSchema }),
        response: {
          200: Type.Object({ authorizationUrl: Type.String() }),
          ...authErrors,
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
      preHandler: [
        authenticate(ctx),
        async (req) => {
          // Linking adds a way into the account: a signed-in user's token, never an API key.
          if (principalOf(req).kind !== 'access_token') {
            throw forbidden('access_token', 'linking a provider needs an access token from a sign-in');
          }
        },
        ctx.rateLimits.guard('usersMeWrite', (req) => req.principal?.userId),
      ],
    },
    async (req, reply) => {
      const type = req.params.type as ProviderType;
      const brand = await brandOfInteraction(ctx, CONSOLE_BRAND_ID);
      if (!brand) throw new ApiError(404, 'not_found', 'the console brand is not set up');
      const input = {
        type,
        brand,
        purpose: 'link' as const,
        userId: principalOf(req).userId,
        expiresAt: new Date(ctx.clock.nowMs() + defaults.providerLinkStateTtl * 1000),
      };
      let authorizationUrl: string;
      if (type === 'telegram') {
        const t = await startTelegram(ctx, input);
        authorizationUrl = `${ctx.config.baseUrl}/oauth/telegram/${encodeURIComponent(brand.oauthCallbackId)}/widget?binding=${encodeURIComponent(t.binding)}`;
      } else authorizationUrl = await startOAuth(ctx, input);
      return reply.header('cache-control', 'no-store').send({ authorizationUrl });
    },
  );
};

function setTelegramCookie(ctx: AppContext, reply: FastifyReply, binding: string): void {
  reply.setCookie(TELEGRAM_COOKIE, binding, {
    path: TELEGRAM_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.baseUrl.startsWith('https:'),
    maxAge: defaults.telegramBindingTtl,
  });
}
