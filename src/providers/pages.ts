import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { esc, sendPage } from '../oidc/pages/html.js';
import { telegram } from './telegram.js';

/**
 * The Telegram Login Widget page. Its CSP admits Telegram's script and the widget's frame and
 * nothing else; `back` returns to the sign-in page (a cancel).
 */
export function sendTelegramWidgetPage(
  reply: FastifyReply,
  input: { botUsername: string; authUrl: string; title: string; back?: string },
): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const script = new URL(telegram.widgetScriptUrl);
  const csp = [
    "default-src 'none'",
    `script-src ${script.origin} 'nonce-${nonce}'`,
    'frame-src https://oauth.telegram.org',
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(input.title)}</title>
<style nonce="${nonce}">body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1f2328}main{max-width:420px;margin:8vh auto;background:#fff;border-radius:12px;padding:32px;text-align:center}a{color:#59636e}</style>
</head>
<body>
<main>
<h1>${esc(input.title)}</h1>
<div id="telegram-login">
<script async nonce="${nonce}" src="${esc(telegram.widgetScriptUrl)}" data-telegram-login="${esc(input.botUsername)}" data-size="large" data-auth-url="${esc(input.authUrl)}" data-request-access="write"></script>
</div>
${input.back ? `<p><a id="back" href="${esc(input.back)}">Back</a></p>` : ''}
</main>
</body>
</html>`;
  return reply
    .code(200)
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
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
