import type { FastifyReply } from 'fastify';
import { esc, sendPage } from '../pages/html.js';

/**
 * The last step of linking a provider account: the browser that started the link sees which
 * provider account goes to which Gatehouse account, and confirms or cancels with a same-origin form
 * carrying the flow's CSRF token. Nothing is linked before Confirm.
 */
export function sendLinkConfirmPage(
  reply: FastifyReply,
  input: {
    linkId: string;
    providerLabel: string;
    providerAccount: string;
    account: string;
    csrfToken: string;
  },
): FastifyReply {
  const label = esc(input.providerLabel);
  return sendPage(reply, {
    title: `Link your ${input.providerLabel} account`,
    body: `<header><h1 id="link-question">Link ${label} account <strong id="provider-account">${esc(input.providerAccount)}</strong> to Gatehouse account <strong id="gatehouse-account">${esc(input.account)}</strong>?</h1></header>
<p>Only confirm if you started this from your own Gatehouse account. Once linked, signing in with this ${label} account opens that Gatehouse account.</p>
<form method="post" action="/oauth/link/${esc(encodeURIComponent(input.linkId))}/confirm">
<input type="hidden" name="csrf_token" value="${esc(input.csrfToken)}">
<button type="submit" name="decision" value="confirm" id="link-confirm">Confirm</button>
<button type="submit" name="decision" value="cancel" class="secondary" id="link-cancel">Cancel</button>
</form>`,
  });
}
