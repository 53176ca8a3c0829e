import type { FastifyReply } from 'fastify';
import { esc, sendPage } from '../pages/html.js';
import { telegram } from '../../providers/telegram.js';

/**
 * The Telegram Login Widget page. Its CSP admits Telegram's script and the widget's frame and
 * nothing else; `back` returns to the sign-in page (a cancel).
 */
export function sendTelegramWidgetPage(
  reply: FastifyReply,
  input: { botUsername: string; authUrl: string; title: string; back?: string },
): FastifyReply {
  return sendPage(reply, {
    title: input.title,
    allow: { scripts: [new URL(telegram.widgetScriptUrl).origin], frames: ['https://oauth.telegram.org'] },
    body: (nonce) => `<h1>${esc(input.title)}</h1>
<div id="telegram-login" class="widget">
<script async nonce="${nonce}" src="${esc(telegram.widgetScriptUrl)}" data-telegram-login="${esc(input.botUsername)}" data-size="large" data-auth-url="${esc(input.authUrl)}" data-request-access="write"></script>
</div>
${input.back ? `<a class="button secondary" id="back" href="${esc(input.back)}">Back</a>` : ''}`,
  });
}

/** The page a console link ends on. */
export function sendLinkResultPage(
  reply: FastifyReply,
  input: { status: number; title: string; message: string; offeredWallets?: string[] },
): FastifyReply {
  const wallets = input.offeredWallets?.length
    ? `<p>Wallets on that account, which you can link from your profile by signing with each:</p>
<ul id="offered-wallets">${input.offeredWallets.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`
    : '';
  return sendPage(reply, {
    title: input.title,
    status: input.status,
    body: `<header><h1>${esc(input.title)}</h1></header>
<p id="${input.status < 400 ? 'link-result' : 'error-description'}">${esc(input.message)}</p>
${wallets}`,
  });
}
