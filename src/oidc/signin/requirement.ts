import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Client } from '../clients.js';
import { meetsRequirement, UNMET_REQUIREMENT } from '../gates.js';
import { esc, sendExpiredSigninPage, sendPage } from '../pages/html.js';
import { type Locale, requestLocale, translator } from '../pages/i18n.js';
import { pageBrand, signedInAs } from '../pages/page-data.js';
import type { InteractionParams, InteractionRow } from '../../db/schema.js';
import { findSession } from './sessions.js';

/**
 * DESIGN §3 "Gates in tokens": an app's required gate policy is checked right after sign-in, before
 * consent (and again before a consent is recorded, and at the token endpoint). A user none of whose
 * linked wallets passes it does not go on: the browser goes to a page that says, in the policy's own
 * words (its name and description, never a mint or an amount), what the app requires, with a link
 * back to the app carrying `access_denied`. A device authorization is denied then and there, so the
 * polling device gets `access_denied` with the same description.
 */
export async function unmetRequirementRedirect(
  ctx: AppContext,
  loaded: { row: InteractionRow; params: InteractionParams; client: Client },
  userId: string,
): Promise<string | null> {
  if (await meetsRequirement(ctx, loaded.client, userId)) return null;
  if (loaded.row.kind === 'device' && loaded.params.userCodeHash)
    await ctx.stores.devices.decide(loaded.params.userCodeHash, ctx.clock.now(), {
      status: 'denied',
      denial: 'requirement',
    });
  return `${ctx.config.baseUrl}/signin/${loaded.row.id}/unmet`;
}

/** The client's redirect URI with the refusal (authorize flows; a device has none). */
function returnUrl(ctx: AppContext, params: InteractionParams): string | null {
  if (!params.redirectUri) return null;
  const u = new URL(params.redirectUri);
  u.searchParams.append('error', 'access_denied');
  u.searchParams.append('error_description', UNMET_REQUIREMENT);
  if (params.state) u.searchParams.append('state', params.state);
  u.searchParams.append('iss', ctx.config.issuer);
  return u.toString();
}

/** The page telling the user which of the app's requirements their wallets fail (403). */
export async function sendUnmetPage(
  ctx: AppContext,
  reply: FastifyReply,
  input: { client: Client; userId: string; locale: Locale; back: string | null },
): Promise<FastifyReply> {
  const { client, locale } = input;
  const t = translator(locale);
  const policy = client.requiredGatePolicyId
    ? await ctx.stores.gatePolicies.describe(client.orgId, client.requiredGatePolicyId)
    : null;
  const who = await signedInAs(ctx, input.userId);
  const title = t('unmet.title', { app: client.name });
  const requirement = policy
    ? `<section class="requirement" aria-labelledby="unmet-requirement-label">
<h2 id="unmet-requirement-label">${esc(t('unmet.requirement', { app: client.name }))}</h2>
<p id="unmet-policy-name"><strong>${esc(policy.name)}</strong></p>
${policy.description ? `<p id="unmet-policy-description">${esc(policy.description)}</p>` : ''}
</section>`
    : '';
  const back = input.back
    ? `<a class="button secondary" id="unmet-back" href="${esc(input.back)}">${esc(t('errorPage.backTo', { app: client.name }))}</a>`
    : `<p id="unmet-device">${esc(t('unmet.device'))}</p>`;
  reply.errorCode = 'access_denied';
  return sendPage(reply, {
    title,
    status: 403,
    brand: await pageBrand(ctx, client.brandId),
    locale,
    body: `<div class="icon-badge error-badge" aria-hidden="true">!</div>
<h1 id="unmet-heading">${esc(title)}</h1>
<p class="lead" id="unmet-lead">${esc(t(who.wallet ? 'unmet.lead' : 'unmet.noWallet', { app: client.name }))}</p>
${requirement}
<p class="hint" id="unmet-hint">${esc(t('unmet.hint'))}</p>
${back}`,
  });
}

/** GET /signin/:id/unmet — the signed-in browser of the interaction sees why it cannot go on. */
export async function unmetRequirementPage(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  loaded: { row: InteractionRow; params: InteractionParams; client: Client },
): Promise<FastifyReply> {
  const { row, params, client } = loaded;
  const locale = requestLocale(req, params.uiLocales);
  const session = await findSession(ctx, req, client.brandId);
  if (!row.user_id || !session || session.id !== row.session_id)
    return sendExpiredSigninPage(reply, { locale });
  // Passing now (a wallet linked or topped up since): the sign-in goes on from where it stopped.
  if (row.kind === 'authorize' && (await meetsRequirement(ctx, client, row.user_id)))
    return reply.header('cache-control', 'no-store').redirect(`${ctx.config.baseUrl}/signin/${row.id}`, 302);
  reply.header('cache-control', 'no-store');
  return sendUnmetPage(ctx, reply, {
    client,
    userId: row.user_id,
    locale,
    back: row.kind === 'authorize' ? returnUrl(ctx, params) : null,
  });
}
