import { defaults } from '../config/defaults.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError, notFound, unauthorized } from '../http/errors.js';
import { safeEqual, sha256 } from '../lib/hash.js';
import { recordActivity } from '../modules/users/activity.js';
import { loadClient } from './clients.js';
import {
  approveDevice,
  denyDevice,
  findPendingDevice,
  formatUserCode,
  normalizeUserCode,
} from './device-store.js';
import { endFlow, flowValue, newFlowBinding, setFlowCookie } from './flow-state.js';
import { findBrand } from './interactions/interactions.queries.js';
import { createInteraction, describeScopes } from './interactions/interactions.service.js';
import { esc, safeUrl, sendPage } from './pages/html.js';
import { csrfTokenFor, findSession } from './sessions.js';

/**
 * The device flow's browser side: enter (or confirm) the user code, sign in to the client's brand
 * through the hosted interaction when needed, then approve or deny. Wrong codes are throttled per
 * IP so codes cannot be guessed: the budget is checked before every lookup and spent on each miss.
 */

const MAX_USER_CODE = 64;

async function checkGuessBudget(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  await ctx.rateLimits.consume('deviceUserCode', ctx.rateLimits.source(req), reply, undefined, 0);
}
async function spendGuess(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  await ctx.rateLimits.consume('deviceUserCode', ctx.rateLimits.source(req), reply);
}

function enterCodePage(reply: FastifyReply, opts: { status?: number; message?: string; code?: string } = {}) {
  return sendPage(reply, {
    title: 'Connect a device',
    status: opts.status,
    body: `<header><h1>Connect a device</h1><p class="sub">Enter the code shown on your device.</p></header>
${opts.message ? `<p class="status error" id="device-error">${esc(opts.message)}</p>` : ''}
<form method="get" action="/device">
<input type="text" name="user_code" id="user-code" autocomplete="off" value="${esc(opts.code ?? '')}" maxlength="${MAX_USER_CODE}" required>
<button type="submit">Continue</button>
</form>`,
  });
}

function resultPage(reply: FastifyReply, title: string, message: string) {
  return sendPage(reply, {
    title,
    body: `<header><h1 id="device-result">${esc(title)}</h1></header><p>${esc(message)}</p>`,
  });
}

/**
 * The device flow's cookie: the user code the user typed, kept by the browser through the hosted
 * sign-in so that no interaction row holds it in plaintext (they keep its hash).
 */
const DEVICE_CODE_FLOW = 'code';

/** GET /device?user_code=… (or, back from sign-in, the code the browser kept) */
export async function devicePage(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  userCode: string | undefined,
): Promise<FastifyReply> {
  const kept = userCode ? undefined : flowValue(req, 'device', DEVICE_CODE_FLOW);
  const code = userCode ?? kept;
  if (!code) return enterCodePage(reply);
  await checkGuessBudget(ctx, req, reply);
  const device = await findPendingDevice(ctx, code);
  const client = device ? await loadClient(ctx, device.clientId) : null;
  const normalized = normalizeUserCode(code);
  if (!device || !client || !normalized) {
    await spendGuess(ctx, req, reply);
    if (kept) endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
    return enterCodePage(reply, {
      status: 400,
      message: 'That code is wrong or has expired.',
      code: userCode,
    });
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
  const brand = await findBrand(ctx.db, client.brandId);
  const scopes = await describeScopes(ctx, client.brandId, device.scopes);
  const csrf = csrfTokenFor(session);
  const hidden = `<input type="hidden" name="user_code" value="${esc(normalized)}"><input type="hidden" name="csrf_token" value="${esc(csrf)}">`;
  const links = [
    safeUrl(brand?.privacyPolicyUrl)
      ? `<a href="${esc(safeUrl(brand?.privacyPolicyUrl))}">Privacy policy</a>`
      : '',
    safeUrl(brand?.termsUrl) ? `<a href="${esc(safeUrl(brand?.termsUrl))}">Terms</a>` : '',
  ].join('');
  return sendPage(reply, {
    title: `Connect ${client.name}`,
    primaryColor: brand?.primaryColor,
    body: `<header><h1 id="brand-name">${esc(client.brandName)}</h1>
<p class="sub">Connect <strong id="app-name">${esc(client.name)}</strong> on your device</p></header>
<p>Code: <strong id="device-code">${esc(formatUserCode(normalized))}</strong>. Only continue if your device shows this code.</p>
<p>${esc(client.name)} would like to:</p>
<ul class="scopes" id="device-scopes">${scopes.map((s) => `<li data-scope="${esc(s.name)}">${esc(s.description)}</li>`).join('')}</ul>
<form method="post" action="/device/approve">${hidden}<button type="submit" id="device-approve">Approve</button></form>
<form method="post" action="/device/deny">${hidden}<button type="submit" class="secondary" id="device-deny">Deny</button></form>
<footer>${links}</footer>`,
  });
}

/**
 * POST /device/approve and /device/deny: `{ user_code }` as JSON, or the page's form with its CSRF
 * token, from a signed-in session of the client's brand.
 */
export async function deviceDecision(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  body: { user_code: string; csrf_token?: string },
  decision: 'approve' | 'deny',
  viaForm: boolean,
): Promise<FastifyReply> {
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
  if (decision === 'approve') {
    if (!(await approveDevice(ctx, body.user_code, session.userId, session.authTime)))
      throw notFound('device request');
    const ua = req.headers['user-agent'];
    await recordActivity(ctx.db, ctx.clock, {
      userId: session.userId,
      type: 'device_authorized',
      ip: req.ip,
      userAgent: typeof ua === 'string' ? ua : undefined,
    });
  } else if (!(await denyDevice(ctx, body.user_code))) {
    throw notFound('device request');
  }
  const status = decision === 'approve' ? 'approved' : 'denied';
  endFlow(ctx, reply, 'device', DEVICE_CODE_FLOW);
  if (viaForm) {
    return decision === 'approve'
      ? resultPage(
          reply,
          'Device connected',
          `${client.name} is now connected. You can return to your device.`,
        )
      : resultPage(reply, 'Request denied', `${client.name} was not connected. You can close this page.`);
  }
  return reply.header('cache-control', 'no-store').send({ status });
}
