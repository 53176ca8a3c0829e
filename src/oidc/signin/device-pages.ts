import { defaults } from '../../config/defaults.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError, OAuthError, notFound, unauthorized } from '../../http/errors.js';
import { safeEqual, sha256 } from '../../lib/hash.js';
import { type Client, loadClient } from '../clients.js';
import { decideDevice, findPendingDevice, formatUserCode, normalizeUserCode } from '../device-store.js';
import { endFlow, flowValue, newFlowBinding, setFlowCookie } from './flow-state.js';
import { createInteraction, describeScopes } from './interactions.js';
import { type PageBrand, esc, fill, sendErrorPage, sendPage } from '../pages/html.js';
import { type Locale, requestLocale, translator } from '../pages/i18n.js';
import { pageBrand, signedInAs } from '../pages/page-data.js';
import { consentLines } from '../pages/signin-page.js';
import { meetsRequirement } from '../gates.js';
import { sendUnmetPage } from './requirement.js';
import { csrfTokenFor, findSession } from './sessions.js';

/**
 * The device flow's browser side: enter (or confirm) the user code, sign in to the client's brand
 * through the hosted interaction when needed, then approve or deny. Wrong codes are throttled per
 * IP so codes cannot be guessed: the budget is checked before every lookup and spent on each miss.
 */

const MAX_USER_CODE = 64;

/** A screen, drawn inline (an image, not script: the CSP allows it). */
const SCREEN_ICON =
  '<svg width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="3" y="4" width="18" height="12" rx="2"/><path d="M8 20h8M12 16v4"/></svg>';

/**
 * The app's required gate policy for the device page and its decisions. A chain that cannot be read
 * now is the page's (or the JSON caller's) 503 in its own form, not the token endpoint's OAuth error;
 * nothing is decided, so the same page or form can be sent again.
 */
async function requirementMet(ctx: AppContext, client: Client, userId: string): Promise<boolean> {
  try {
    return await meetsRequirement(ctx, client, userId);
  } catch (err) {
    if (err instanceof OAuthError && err.status === 503) throw new ApiError(503, err.error, err.description);
    throw err;
  }
}

/**
 * The device page when the app's requirement cannot be checked now (503): a line of its own (not the
 * generic "went wrong on our side") and a way to try again, the confirmation page for the same code.
 */
export function sendRequirementUnavailablePage(
  reply: FastifyReply,
  err: ApiError,
  page: { locale: Locale; brand: PageBrand | null; userCode: string },
): FastifyReply {
  const t = translator(page.locale);
  reply.header('cache-control', 'no-store');
  const back = {
    href: `/device?user_code=${encodeURIComponent(normalizeUserCode(page.userCode) ?? page.userCode)}`,
    label: t('device.tryAgain'),
  };
  return sendErrorPage(reply, 503, err.code, t('device.requirementUnavailable'), t('device.title'), {
    ...page,
    back,
  });
}

/** A decision or page that stopped because the requirement cannot be checked now. */
const requirementUnavailable = (err: ApiError) =>
  err.status === 503 && err.code === 'temporarily_unavailable';

async function checkGuessBudget(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  await ctx.rateLimits.consume('deviceUserCode', ctx.rateLimits.source(req), reply, undefined, 0);
}
async function spendGuess(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  await ctx.rateLimits.consume('deviceUserCode', ctx.rateLimits.source(req), reply);
}

function enterCodePage(
  reply: FastifyReply,
  locale: Locale,
  opts: { status?: number; wrong?: boolean; code?: string } = {},
) {
  const t = translator(locale);
  const describedBy = opts.wrong ? 'user-code-hint device-error' : 'user-code-hint';
  return sendPage(reply, {
    title: t('device.title'),
    status: opts.status,
    locale,
    body: `<div class="icon-badge ok-badge" aria-hidden="true">${SCREEN_ICON}</div>
<h1>${esc(t('device.title'))}</h1>
<p class="sub">${esc(t('device.sub'))}</p>
<form method="get" action="/device">
<label for="user-code">${esc(t('device.codeLabel'))}</label>
<p class="hint" id="user-code-hint">${esc(t('device.codeHint'))}</p>
${opts.wrong ? `<p class="error" id="device-error" role="alert">${esc(t('device.wrongCode'))}</p>` : ''}
<input type="text" name="user_code" id="user-code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" value="${esc(
      opts.code ?? '',
    )}" maxlength="${MAX_USER_CODE}" required aria-describedby="${describedBy}"${opts.wrong ? ' aria-invalid="true"' : ''}>
<button type="submit">${esc(t('device.continue'))}</button>
</form>`,
  });
}

function resultPage(
  reply: FastifyReply,
  opts: { brand: PageBrand | null; locale: Locale; approved: boolean; app: string },
) {
  const t = translator(opts.locale);
  const title = t(opts.approved ? 'device.approvedTitle' : 'device.deniedTitle');
  return sendPage(reply, {
    title,
    brand: opts.brand,
    locale: opts.locale,
    body: `<div class="icon-badge ${opts.approved ? 'ok-badge' : 'error-badge'}" aria-hidden="true">${opts.approved ? '✓' : '✕'}</div>
<h1 id="device-result">${esc(title)}</h1>
<p class="lead" id="device-result-message">${esc(
      t(opts.approved ? 'device.approvedBody' : 'device.deniedBody', { app: opts.app }),
    )}</p>`,
  });
}

/** The device flow's cookie: the user code this browser is approving, kept across sign-in. */
const DEVICE_CODE_FLOW = 'code';

/** GET /device?user_code=… (or, back from sign-in, the code the browser kept) */
export async function devicePage(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  userCode: string | undefined,
): Promise<FastifyReply> {
  const locale = requestLocale(req);
  const kept = userCode ? undefined : flowValue(req, 'device', DEVICE_CODE_FLOW);
  const code = userCode ?? kept;
  if (!code) return enterCodePage(reply, locale);
  await checkGuessBudget(ctx, req, reply);
  const device = await findPendingDevice(ctx, code);
  const client = device ? await loadClient(ctx, device.clientId) : null;
  const normalized = normalizeUserCode(code);
  if (!device || !client || !normalized) {
    await spendGuess(ctx, req, reply);
    if (kept) endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
    return enterCodePage(reply, locale, { status: 400, wrong: true, code: userCode });
  }
  const session = await findSession(ctx, req, client.brandId);
  if (!session) {
    // Bound to this browser like /oauth2/authorize's: only it may complete a provider sign-in.
    const binding = newFlowBinding();
    const id = await createInteraction(ctx, {
      kind: 'device',
      client,
      params: { redirectUri: '', scopes: device.scopes, userCodeHash: sha256(normalized) },
      returnTo: '/device',
      bindingHash: binding.hash,
    });
    setFlowCookie(ctx, reply, 'interaction', id, binding.value, defaults.interactionTtl);
    setFlowCookie(ctx, reply, 'device', DEVICE_CODE_FLOW, normalized, defaults.deviceCodeTtl);
    return reply.header('cache-control', 'no-store').redirect(`${ctx.config.baseUrl}/signin/${id}`, 302);
  }
  let meets: boolean;
  try {
    meets = await requirementMet(ctx, client, session.userId);
  } catch (err) {
    if (!(err instanceof ApiError && requirementUnavailable(err))) throw err;
    return sendRequirementUnavailablePage(reply, err, {
      locale,
      brand: await pageBrand(ctx, client.brandId),
      userCode: normalized,
    });
  }
  if (!meets) {
    // The app's required gate policy fails: the device is refused now, the user told why.
    await decideDevice(ctx, normalized, { approve: false, denial: 'requirement' });
    endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
    reply.header('cache-control', 'no-store');
    return sendUnmetPage(ctx, reply, { client, userId: session.userId, locale, back: null });
  }
  const t = translator(locale);
  const brand = await pageBrand(ctx, client.brandId);
  const who = await signedInAs(ctx, session.userId);
  const lines = consentLines(
    await describeScopes(ctx, client.brandId, device.scopes),
    who,
    client.brandName,
    t,
  );
  const csrf = csrfTokenFor(session);
  const hidden = `<input type="hidden" name="user_code" value="${esc(normalized)}"><input type="hidden" name="csrf_token" value="${esc(csrf)}">`;
  return sendPage(reply, {
    title: t('device.confirmTitle', { app: client.name }),
    brand,
    locale,
    body: `<h1 id="device-heading">${esc(t('device.confirmHeading', { app: client.name, brand: client.brandName }))}</h1>
<p class="who" id="signed-in-as"><span>${fill(t('consent.signedInAs'), 'who', `<strong title="${esc(who.full)}">${esc(who.label)}</strong>`)}</span></p>
<p>${esc(t('device.checkCode'))}</p>
<p class="code" id="device-code">${esc(formatUserCode(normalized))}</p>
<p>${esc(t('consent.wouldLike', { app: client.name }))}</p>
<ul class="scopes" id="device-scopes">${lines.map((l) => `<li data-scope="${esc(l.name)}">${esc(l.text)}</li>`).join('')}</ul>
<div class="actions">
<form method="post" action="/device/deny">${hidden}<button type="submit" class="secondary" id="device-deny">${esc(t('device.deny'))}</button></form>
<form method="post" action="/device/approve">${hidden}<button type="submit" id="device-approve">${esc(t('device.approve'))}</button></form>
</div>`,
  });
}

/**
 * POST /device/approve and /device/deny: `{ user_code }` as JSON, or the page's form with its CSRF
 * token, from a signed-in session of the client's brand. The form gets pages (the outcome, or the
 * error as a page with the same status); JSON callers get JSON.
 */
export async function deviceDecision(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  body: { user_code: string; csrf_token?: string },
  decision: 'approve' | 'deny',
  viaForm: boolean,
): Promise<FastifyReply> {
  if (!viaForm) {
    const { status } = await decide(ctx, req, reply, body, decision, false);
    endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
    return reply.header('cache-control', 'no-store').send({ status });
  }
  const locale = requestLocale(req);
  const t = translator(locale);
  try {
    const { client, unmet, userId } = await decide(ctx, req, reply, body, decision, true);
    endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
    if (unmet) return sendUnmetPage(ctx, reply, { client, userId, locale, back: null });
    return resultPage(reply, {
      brand: await pageBrand(ctx, client.brandId),
      locale,
      approved: decision === 'approve',
      app: client.name,
    });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    for (const [k, v] of Object.entries(err.headers ?? {}))
      if (k.toLowerCase() !== 'www-authenticate') reply.header(k, v);
    const message =
      err.status === 404 || err.status === 403 || err.status === 401
        ? t('device.staleForm')
        : err.status === 429
          ? t('errorPage.tooMany')
          : err.message;
    // A refused form (no session, stale token) or an unchecked requirement was for a code that
    // exists: show its brand.
    const unavailable = requirementUnavailable(err);
    const device =
      err.status === 401 || err.status === 403 || unavailable
        ? await findPendingDevice(ctx, body.user_code)
        : null;
    const client = device ? await loadClient(ctx, device.clientId) : null;
    const brand = client ? await pageBrand(ctx, client.brandId) : null;
    if (unavailable)
      return sendRequirementUnavailablePage(reply, err, { locale, brand, userCode: body.user_code });
    return sendErrorPage(reply, err.status, err.code, message, t('device.title'), { locale, brand });
  }
}

async function decide(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  body: { user_code: string; csrf_token?: string },
  decision: 'approve' | 'deny',
  viaForm: boolean,
) {
  await checkGuessBudget(ctx, req, reply);
  const device = await findPendingDevice(ctx, body.user_code);
  const client = device ? await loadClient(ctx, device.clientId) : null;
  if (!device || !client) {
    await spendGuess(ctx, req, reply);
    throw notFound('device request');
  }
  const session = await findSession(ctx, req, client.brandId);
  if (!session) throw unauthorized('sign in to approve or deny this device');
  if (viaForm && !(body.csrf_token && safeEqual(body.csrf_token, csrfTokenFor(session)))) {
    throw new ApiError(403, 'forbidden', 'the form is stale or was not sent by this site', {
      missing: ['csrf_token'],
    });
  }
  // An approval that the app's required gate policy refuses is a denial (DESIGN §3).
  const unmet = decision === 'approve' && !(await requirementMet(ctx, client, session.userId));
  const approve = decision === 'approve' && !unmet;
  const decided = await decideDevice(
    ctx,
    body.user_code,
    approve
      ? { approve: true, userId: session.userId, authTime: session.authTime }
      : { approve: false, ...(unmet ? { denial: 'requirement' as const } : {}) },
  );
  if (!decided) throw notFound('device request');
  if (approve) {
    const ua = req.headers['user-agent'];
    await ctx.stores.accounts.recordDeviceAuthorized({
      userId: session.userId,
      ip: req.ip,
      userAgent: typeof ua === 'string' ? ua : undefined,
    });
  }
  return { client, status: approve ? 'approved' : 'denied', unmet, userId: session.userId };
}
