import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { OAuthError } from '../../http/errors.js';
import { sha256 } from '../../lib/hash.js';
import { PROVIDER_LABELS } from '../../providers/index.js';
import type { ExternalIdentity, ProviderTokens } from '../../providers/provider.js';
import { TELEGRAM_FIELDS } from '../../providers/telegram.js';
import type { ProviderType } from '../../providers/types.js';
import { sendErrorPage, sendExpiredSigninPage } from '../pages/html.js';
import { requestLocale } from '../pages/i18n.js';
import { pageBrand } from '../pages/page-data.js';
import { requestMeta } from './complete.js';
import { AccountGone, InteractionGone, LinkedToAnotherUser, ProviderNotEnabled } from './errors.js';
import { endFlow, flowBrowserMatches, flowCsrfToken, flowFormMatches } from './flow-state.js';
import { type LoadedInteraction, loadInteraction } from './interactions.js';
import { sendLinkConfirmPage } from './link-confirm-page.js';
import {
  accountLabel,
  openPendingLink,
  type PendingLink,
  providerAccountLabel,
  sealPendingLink,
} from './pending-link.js';
import { linkIdentity } from './provider-accounts.js';
import {
  oauthIdentity,
  PROVIDER_ERROR_MESSAGES,
  type ProviderFailure,
  ProviderFlowError,
  startOAuth,
  startTelegram,
  telegramIdentity,
} from './provider-flow.js';
import { sendLinkResultPage, sendTelegramWidgetPage } from './provider-pages.js';
import { completeProviderSignIn, recordFailedSignIn } from './provider-signin.js';
import type { ProviderStateRow } from './stores.js';

/** The cookie binding a browser to the Telegram trip it started (the widget carries no state). */
export const TELEGRAM_COOKIE = 'gh_tg_binding';
const TELEGRAM_COOKIE_PATH = '/oauth/telegram/';

const OTHER_BROWSER =
  'This sign-in was started in another browser. Go back to the app and start again in this one.';
const OTHER_BROWSER_LINK =
  'This link was started in another browser or by another account. Start it again from your own account in this browser.';
const STALE_LINK = 'This link request has expired or was already answered. Start again from your account.';
const LINK_REFUSED = 'This account link cannot be completed';
const STALE_STATE =
  'This sign-in attempt has expired or was already used. Go back to the app and start again.';

function signinPageWithError(ctx: AppContext, interactionId: string, reason: ProviderFailure): string {
  return `${ctx.config.baseUrl}/signin/${encodeURIComponent(interactionId)}?error=${reason}`;
}

export function setTelegramCookie(ctx: AppContext, reply: FastifyReply, binding: string): void {
  reply.setCookie(TELEGRAM_COOKIE, binding, {
    path: TELEGRAM_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.baseUrl.startsWith('https:'),
    maxAge: defaults.telegramBindingTtl,
  });
}

/**
 * `GET /interactions/:id/providers/:type`: the trip out (a redirect, or Telegram's widget page), only
 * from the browser that started the interaction. Else someone who learnt its id could sign in at the
 * provider as themselves and hand the return to the victim's browser, whose cookie would complete it.
 */
export async function startProviderSignIn(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  interactionId: string,
  type: ProviderType,
) {
  let loaded: LoadedInteraction;
  try {
    loaded = await loadInteraction(ctx, interactionId);
  } catch (err) {
    if (err instanceof InteractionGone) return sendExpiredSigninPage(reply);
    throw err;
  }
  if (!flowBrowserMatches(req, 'interaction', loaded.row.id, loaded.row.binding_hash)) {
    const page = { brand: await pageBrand(ctx, loaded.client.brandId), locale: requestLocale(req) };
    return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER, undefined, page);
  }
  const brand = await ctx.stores.signin.brands.callbackId(loaded.client.brandId);
  if (!brand) return sendErrorPage(reply, 404, 'not_found', 'This sign-in link is no longer valid.');
  const { id, expires_at: expiresAt } = loaded.row;
  const input = { type, brand, purpose: 'signin' as const, interactionId: id, expiresAt };
  try {
    if (type === 'telegram') {
      const t = await startTelegram(ctx, input);
      setTelegramCookie(ctx, reply, t.binding);
      return sendTelegramWidgetPage(reply, {
        botUsername: t.botUsername,
        authUrl: t.authUrl,
        title: 'Continue with Telegram',
        back: signinPageWithError(ctx, id, 'cancelled'),
      });
    }
    return reply.header('cache-control', 'no-store').redirect(await startOAuth(ctx, input), 302);
  } catch (err) {
    if (err instanceof ProviderNotEnabled) return sendErrorPage(reply, 404, 'not_found', err.message);
    throw err;
  }
}

/** The state a return carries: the `state` parameter, or Telegram's binding cookie (cleared). */
function returnedState(
  req: FastifyRequest,
  reply: FastifyReply,
  type: ProviderType,
  fields: URLSearchParams,
) {
  if (type !== 'telegram') return fields.get('state') ?? undefined;
  reply.clearCookie(TELEGRAM_COOKIE, { path: TELEGRAM_COOKIE_PATH });
  return req.cookies?.[TELEGRAM_COOKIE];
}

/**
 * `/oauth/:type/:oauthCallbackId/callback`: the return is checked completely — the browser that
 * started the flow, the live interaction — before the state is redeemed, so a return delivered to
 * another browser burns nothing; then the sign-in or the link continues.
 */
export async function providerReturn(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  route: { type: ProviderType; oauthCallbackId: string; fields: URLSearchParams; status: 302 | 303 },
) {
  const raw = returnedState(req, reply, route.type, route.fields);
  if (!raw || raw.length > 200) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
  const states = ctx.stores.signin.providerStates;
  const found = await states.findLive({
    stateHash: sha256(raw),
    provider: route.type,
    oauthCallbackId: route.oauthCallbackId,
    now: ctx.clock.now(),
  });
  if (!found) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
  reply.header('cache-control', 'no-store');
  const checked = await checkReturn(ctx, req, reply, found);
  if (checked.refused) return checked.refused;
  // Redeemed once: of a replay or a second tab, only one gets past here.
  const state = await states.consume({ id: found.id, now: ctx.clock.now() });
  if (!state) return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE);
  const trip = { state, fields: route.fields, oauthCallbackId: route.oauthCallbackId };
  return checked.loaded
    ? signinCallback(ctx, req, reply, { ...trip, loaded: checked.loaded, status: route.status })
    : linkCallback(ctx, req, reply, trip);
}

/** The browser and interaction checks of a return; `refused` is the page already sent. */
async function checkReturn(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  found: ProviderStateRow,
): Promise<{ refused?: FastifyReply; loaded?: LoadedInteraction }> {
  if (found.purpose === 'link') {
    if (flowBrowserMatches(req, 'link', found.id, found.binding_hash)) return {};
    req.log.info({ provider: found.provider }, 'provider link return from a browser that did not start it');
    return { refused: sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER_LINK, LINK_REFUSED) };
  }
  const page = { brand: await pageBrand(ctx, found.brand_id), locale: requestLocale(req) };
  const stale = () => ({
    refused: sendErrorPage(reply, 400, 'invalid_request', STALE_STATE, undefined, page),
  });
  let loaded: LoadedInteraction;
  try {
    loaded = await loadInteraction(ctx, found.interaction_id!);
  } catch {
    return stale();
  }
  if (loaded.client.brandId !== found.brand_id) return stale();
  // Login CSRF: only the browser that started the interaction may complete it. Nothing recorded.
  if (!flowBrowserMatches(req, 'interaction', loaded.row.id, loaded.row.binding_hash)) {
    req.log.info({ provider: found.provider }, 'provider return from a browser not bound to the interaction');
    return { refused: sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER, undefined, page) };
  }
  return { loaded };
}

interface Trip {
  state: ProviderStateRow;
  fields: URLSearchParams;
  oauthCallbackId: string;
}

async function identityOf(
  ctx: AppContext,
  trip: Trip,
): Promise<{ identity: ExternalIdentity; tokens?: ProviderTokens }> {
  const { state, fields } = trip;
  if (state.provider === 'telegram') {
    const telegramFields = Object.fromEntries(TELEGRAM_FIELDS.map((k) => [k, fields.get(k) ?? undefined]));
    return { identity: await telegramIdentity(ctx, state, telegramFields) };
  }
  return oauthIdentity(ctx, state, fields, trip.oauthCallbackId);
}

/** A sign-in's return: the account, the session, then consent or the client. Failures go back to the page. */
async function signinCallback(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  trip: Trip & { loaded: LoadedInteraction; status: 302 | 303 },
) {
  const { state, loaded, status } = trip;
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
    const { identity, tokens } = await identityOf(ctx, trip);
    const input = { provider: state.provider, identity, tokens };
    const location = await completeProviderSignIn(ctx, req, reply, loaded, input);
    // Done with the browser binding unless the consent step still follows.
    if (!location.startsWith(`${ctx.config.baseUrl}/signin/`))
      endFlow(ctx, reply, 'interaction', loaded.row.id);
    return reply.redirect(location, status);
  } catch (err) {
    if (err instanceof ProviderFlowError) {
      req.log.info({ provider: state.provider, reason: err.reason }, 'upstream sign-in failed');
      return fail(err.reason, err.claimedExternalId);
    }
    if (err instanceof LinkedToAnotherUser) return fail('account_conflict');
    if (err instanceof OAuthError && err.error === 'temporarily_unavailable') {
      // Signed in (the session and the interaction's user stay), but the app's required gate policy
      // cannot be read now: no failed sign-in; the page says why and its Allow tries again.
      req.log.warn({ provider: state.provider }, 'upstream sign-in: app requirement cannot be checked now');
      return reply.redirect(signinPageWithError(ctx, loaded.row.id, 'requirement_unavailable'), status);
    }
    if (err instanceof InteractionGone) {
      // The state names the brand: its error page carries the brand's logo, colour and support address.
      const page = { brand: await pageBrand(ctx, state.brand_id), locale: requestLocale(req) };
      return sendErrorPage(reply, 400, 'invalid_request', STALE_STATE, undefined, page);
    }
    // Never a 500 on the way back from a provider: the message only, never the error object.
    const message = (err as Error)?.message;
    req.log.error({ provider: state.provider, err: { message } }, 'upstream sign-in error');
    return fail('unexpected');
  }
}

/** A link's provider return: the identity waits, sealed, for the browser's confirmation. */
async function linkCallback(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, trip: Trip) {
  const { state } = trip;
  let pending: PendingLink;
  try {
    pending = await identityOf(ctx, trip);
  } catch (err) {
    return linkFailed(ctx, req, reply, state, err);
  }
  const account = await accountLabel(ctx, state.user_id!);
  if (!account) return linkFailed(ctx, req, reply, state, new AccountGone());
  await ctx.stores.signin.providerStates.holdPendingLink(state.id, sealPendingLink(ctx, state.id, pending));
  return sendLinkConfirmPage(reply, {
    linkId: state.id,
    providerLabel: PROVIDER_LABELS[state.provider as ProviderType],
    providerAccount: providerAccountLabel(pending.identity),
    account,
    csrfToken: flowCsrfToken(req, 'link', state.id)!,
  });
}

/** The page a failed link ends on, by the failure's type. */
async function linkFailed(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  state: ProviderStateRow,
  err: unknown,
) {
  const label = PROVIDER_LABELS[state.provider as ProviderType];
  endFlow(ctx, reply, 'link', state.id);
  let status = 400;
  let message: string = PROVIDER_ERROR_MESSAGES.unexpected;
  if (err instanceof ProviderFlowError) {
    message = err.message;
    const failed = { provider: state.provider, userId: state.user_id };
    await recordFailedSignIn(ctx, req, failed).catch(() => undefined);
  } else if (err instanceof LinkedToAnotherUser) {
    status = 409;
    message = `That ${label} account is linked to another user.`;
  } else if (err instanceof AccountGone) {
    status = 404;
    message = 'Your account was not found.';
  } else {
    const logged = { provider: state.provider, err: { message: (err as Error)?.message } };
    req.log.error(logged, 'provider link error');
  }
  return sendLinkResultPage(reply, { status, title: `${label} account not linked`, message });
}

/**
 * `POST /oauth/link/:linkId/confirm`: the browser that started the link (flow cookie), with the
 * page's CSRF token. Checked completely before the pending link is answered.
 */
export async function answerLink(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  input: { linkId: string; csrfToken: string; decision: 'confirm' | 'cancel' },
) {
  const now = ctx.clock.now();
  const states = ctx.stores.signin.providerStates;
  const state = await states.findPendingLink(input.linkId, now);
  if (!state) return sendErrorPage(reply, 404, 'not_found', STALE_LINK, LINK_REFUSED);
  if (!flowFormMatches(req, 'link', state.id, state.binding_hash, input.csrfToken)) {
    req.log.info({ provider: state.provider }, 'link confirmation without the starting browser or its form');
    return sendErrorPage(reply, 403, 'forbidden', OTHER_BROWSER_LINK, LINK_REFUSED);
  }
  if (!(await states.answerPendingLink(state.id, now)))
    return sendErrorPage(reply, 404, 'not_found', STALE_LINK, LINK_REFUSED);
  endFlow(ctx, reply, 'link', state.id);
  const label = PROVIDER_LABELS[state.provider as ProviderType];
  if (input.decision === 'cancel') {
    const message = 'Nothing was linked. You can close this window.';
    return sendLinkResultPage(reply, { status: 200, title: `${label} account not linked`, message });
  }
  const { identity, tokens } = openPendingLink(ctx, state);
  try {
    const link = { provider: state.provider, brandId: state.brand_id, identity, tokens };
    await linkIdentity(ctx, { ...link, userId: state.user_id!, meta: requestMeta(req) });
  } catch (err) {
    return linkFailed(ctx, req, reply, state, err);
  }
  return sendLinkResultPage(reply, {
    status: 200,
    title: `${label} account linked`,
    message: `Your ${label} account is now linked. You can close this window.`,
    offeredWallets: identity.offeredWallets,
  });
}

/** `GET /oauth/telegram/:oauthCallbackId/widget`: the console's Telegram link, for its own browser. */
export async function telegramLinkWidget(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  input: { oauthCallbackId: string; binding: string },
) {
  const signin = ctx.stores.signin;
  const row = await signin.providerStates.findTelegramLink({
    bindingHash: sha256(input.binding),
    oauthCallbackId: input.oauthCallbackId,
    now: ctx.clock.now(),
  });
  if (!row) return sendErrorPage(reply, 404, 'not_found', STALE_STATE);
  // Only the browser that asked for the link gets the widget (and with it the Telegram cookie).
  if (!flowBrowserMatches(req, 'link', row.id, row.binding_hash))
    return sendErrorPage(reply, 400, 'invalid_request', OTHER_BROWSER_LINK, LINK_REFUSED);
  const creds = await signin.connections.credentials(row.brand_id, 'telegram');
  if (!creds) return sendErrorPage(reply, 404, 'not_found', 'Telegram sign-in is not enabled.');
  setTelegramCookie(ctx, reply, input.binding);
  return sendTelegramWidgetPage(reply, {
    botUsername: (creds.config as { botUsername: string }).botUsername,
    authUrl: `${ctx.config.baseUrl}/oauth/telegram/${input.oauthCallbackId}/callback`,
    title: 'Link your Telegram account',
  });
}
