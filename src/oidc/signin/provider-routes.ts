import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CONSOLE_BRAND_ID } from '../../config/system.js';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { ApiError, forbidden } from '../../http/errors.js';
import { ErrorEnvelope, authErrors, errorResponses } from '../../http/schemas.js';
import { sha256 } from '../../lib/hash.js';
import { linkIdentity } from './provider-accounts.js';
import {
  PROVIDER_ERROR_MESSAGES,
  type ProviderFailure,
  ProviderFlowError,
  oauthIdentity,
  startOAuth,
  startTelegram,
  telegramIdentity,
} from './provider-flow.js';
import { PROVIDER_LABELS } from '../../providers/index.js';
import { sendLinkResultPage, sendTelegramWidgetPage } from './provider-pages.js';
import type { ExternalIdentity, ProviderTokens } from '../../providers/provider.js';
import { completeProviderSignIn, recordFailedSignIn } from './provider-signin.js';
import { requestMeta } from './complete.js';
import type { ProviderStateRow } from './stores.js';
import { sweepExpiredProviderStates } from './sweep.js';
import {
  type PendingLink,
  accountLabel,
  openPendingLink,
  providerAccountLabel,
  sealPendingLink,
} from './pending-link.js';
import { sendLinkConfirmPage } from './link-confirm-page.js';
import { newId } from '../../lib/ids.js';
import { TELEGRAM_FIELDS } from '../../providers/telegram.js';
import { PROVIDER_TYPES, type ProviderType } from '../../providers/types.js';
import {
  endFlow,
  flowBrowserMatches,
  flowCsrfToken,
  flowFormMatches,
  newFlowBinding,
  setFlowCookie,
} from './flow-state.js';
import { isForm, sameOriginGuard } from './guards.js';
import { type LoadedInteraction, loadInteraction } from './interactions.js';
import { sendErrorPage, sendExpiredSigninPage } from '../pages/html.js';
import { requestLocale } from '../pages/i18n.js';
import { pageBrand } from '../pages/page-data.js';
import { routeDoc } from '../../http/route-doc.js';

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

const OTHER_BROWSER_LINK =
  'This link was started in another browser or by another account. Start it again from your own account in this browser.';

const STALE_LINK = 'This link request has expired or was already answered. Start again from your account.';

const LINK_REFUSED = 'This account link cannot be completed';

const STALE_STATE =
  'This sign-in attempt has expired or was already used. Go back to the app and start again.';

function brandOfInteraction(ctx: AppContext, brandId: string) {
  return ctx.stores.signin.brands.callbackId(brandId);
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
    sweepExpiredProviderStates(ctx).catch(() => app.log.warn('provider state sweep failed'));
  }, defaults.tokenSweepInterval * 1000);
  sweeper.unref();
  ctx.hooks.onClose.push(() => clearInterval(sweeper));

  app.get(
    '/interactions/:id/providers/:type',
    {
      schema: { hide: true, params: InteractionProviderParams, response: { ...Page, 429: ErrorEnvelope } },
      preHandler: ctx.rateLimits.guard('providerStart', (req) => ctx.rateLimits.source(req)),
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
    const found = await ctx.stores.signin.providerStates.findLive({
      stateHash: sha256(raw),
      provider: type,
      oauthCallbackId,
      now: ctx.clock.now(),
    });
    if (!found) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    reply.header('cache-control', 'no-store');
    // The return is checked completely — the browser that started the flow, the live interaction —
    // before the state is redeemed: a return delivered to another browser burns nothing.
    let loaded: LoadedInteraction | undefined;
    if (found.purpose === 'link') {
      if (!flowBrowserMatches(req, 'link', found.id, found.binding_hash)) {
        req.log.info(
          { provider: found.provider },
          'provider link return from a browser that did not start it',
        );
        return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER_LINK, LINK_REFUSED);
      }
    } else {
      const page = { brand: await pageBrand(ctx, found.brand_id), locale: requestLocale(req) };
      try {
        loaded = await loadInteraction(ctx, found.interaction_id!);
      } catch {
        return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE, undefined, page);
      }
      if (loaded.client.brandId !== found.brand_id)
        return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE, undefined, page);
      // Login CSRF: only the browser that started the interaction may complete it. Nothing recorded.
      if (!flowBrowserMatches(req, 'interaction', loaded.row.id, loaded.row.binding_hash)) {
        req.log.info(
          { provider: found.provider },
          'provider return from a browser not bound to the interaction',
        );
        return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER, undefined, page);
      }
    }
    // Redeemed once: of a replay or a second tab, only one gets past here.
    const state = await ctx.stores.signin.providerStates.consume({ id: found.id, now: ctx.clock.now() });
    if (!state) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
    return loaded
      ? signinCallback(req, reply, state, loaded, fields, oauthCallbackId, status)
      : linkCallback(req, reply, state, fields, oauthCallbackId);
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
    loaded: LoadedInteraction,
    fields: URLSearchParams,
    oauthCallbackId: string,
    status: 302 | 303,
  ) {
    // The state names the brand: its error pages carry the brand's logo, colour and support address.
    const page = { brand: await pageBrand(ctx, state.brand_id), locale: requestLocale(req) };
    const fail = async (reason: ProviderFailure, claimedExternalId?: string) => {
      ctx.metrics.signIn(state.provider, 'failed');
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
        endFlow(ctx, reply, 'interaction', loaded.row.id);
      return reply.redirect(location, status);
    } catch (err) {
      if (err instanceof ProviderFlowError) {
        req.log.info({ provider: state.provider, reason: err.reason }, 'upstream sign-in failed');
        return fail(err.reason, err.claimedExternalId);
      }
      if (err instanceof ApiError && err.status === 409) return fail('account_conflict');
      if (err instanceof ApiError && err.status === 404)
        return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE, undefined, page);
      // Never a 500 on the way back from a provider: the message only, never the error object.
      req.log.error(
        { provider: state.provider, err: { message: (err as Error)?.message } },
        'upstream sign-in error',
      );
      return fail('unexpected');
    }
  }

  /** A link's provider return: the identity waits, sealed, for the browser's confirmation. */
  async function linkCallback(
    req: FastifyRequest,
    reply: FastifyReply,
    state: ProviderStateRow,
    fields: URLSearchParams,
    oauthCallbackId: string,
  ) {
    const label = PROVIDER_LABELS[state.provider as ProviderType];
    let pending: PendingLink;
    try {
      pending = await identityOf(state, fields, oauthCallbackId);
    } catch (err) {
      return linkFailed(req, reply, state, err);
    }
    const account = await accountLabel(ctx, state.user_id!);
    if (!account) return linkFailed(req, reply, state, new ApiError(404, 'not_found', 'user not found'));
    await ctx.stores.signin.providerStates.holdPendingLink(state.id, sealPendingLink(ctx, state.id, pending));
    return sendLinkConfirmPage(reply, {
      linkId: state.id,
      providerLabel: label,
      providerAccount: providerAccountLabel(pending.identity),
      account,
      csrfToken: flowCsrfToken(req, 'link', state.id)!,
    });
  }

  async function linkFailed(req: FastifyRequest, reply: FastifyReply, state: ProviderStateRow, err: unknown) {
    const label = PROVIDER_LABELS[state.provider as ProviderType];
    endFlow(ctx, reply, 'link', state.id);
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
    async (req, reply) => {
      const { linkId } = req.params;
      const now = ctx.clock.now();
      const state = await ctx.stores.signin.providerStates.findPendingLink(linkId, now);
      if (!state) return sendErrorPage(reply, 404, 'not_found', STALE_LINK, LINK_REFUSED);
      if (!flowFormMatches(req, 'link', state.id, state.binding_hash, req.body.csrf_token)) {
        req.log.info(
          { provider: state.provider },
          'link confirmation without the starting browser or its form',
        );
        return sendErrorPage(reply, 403, 'forbidden', OTHER_BROWSER_LINK, LINK_REFUSED);
      }
      if (!(await ctx.stores.signin.providerStates.answerPendingLink(state.id, now)))
        return sendErrorPage(reply, 404, 'not_found', STALE_LINK, LINK_REFUSED);
      endFlow(ctx, reply, 'link', state.id);
      const label = PROVIDER_LABELS[state.provider as ProviderType];
      if (req.body.decision === 'cancel') {
        return sendLinkResultPage(reply, {
          status: 200,
          title: `${label} account not linked`,
          message: `Nothing was linked. You can close this window.`,
        });
      }
      const { identity, tokens } = openPendingLink(ctx, state);
      try {
        await linkIdentity(ctx, {
          userId: state.user_id!,
          provider: state.provider,
          brandId: state.brand_id,
          identity,
          tokens,
          meta: requestMeta(req),
        });
      } catch (err) {
        return linkFailed(req, reply, state, err);
      }
      return sendLinkResultPage(reply, {
        status: 200,
        title: `${label} account linked`,
        message: `Your ${label} account is now linked. You can close this window.`,
        offeredWallets: identity.offeredWallets,
      });
    },
  );

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
      const row = await ctx.stores.signin.providerStates.findTelegramLink({
        bindingHash: sha256(req.query.binding),
        oauthCallbackId: req.params.oauthCallbackId,
        now: ctx.clock.now(),
      });
      if (!row) return sendErrorPage(reply, 404, 'not_found', STALE_STATE);
      // Only the browser that asked for the link gets the widget (and with it the Telegram cookie).
      if (!flowBrowserMatches(req, 'link', row.id, row.binding_hash))
        return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER_LINK, LINK_REFUSED);
      const creds = await ctx.stores.signin.connections.credentials(row.brand_id, 'telegram');
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
      config: { apiKeyScope: 'access-token-only' },
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
      // Bound to the browser that asks (the console, same-origin) and the user whose token it sends:
      // the URL alone completes nothing in another browser.
      const id = newId('pst_');
      const binding = newFlowBinding();
      const input = {
        id,
        type,
        brand,
        purpose: 'link' as const,
        userId: principalOf(req).userId,
        expiresAt: new Date(ctx.clock.nowMs() + defaults.providerLinkStateTtl * 1000),
        bindingHash: binding.hash,
      };
      let authorizationUrl: string;
      if (type === 'telegram') {
        const t = await startTelegram(ctx, input);
        authorizationUrl = `${ctx.config.baseUrl}/oauth/telegram/${encodeURIComponent(brand.oauthCallbackId)}/widget?binding=${encodeURIComponent(t.binding)}`;
      } else authorizationUrl = await startOAuth(ctx, input);
      setFlowCookie(ctx, reply, 'link', id, binding.value, defaults.providerLinkStateTtl);
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
