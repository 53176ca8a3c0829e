import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Escapes text for HTML element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON safe to place inside a <script type="application/json"> element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Only an http(s) URL may become a link or an image source. */
export function safeUrl(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** A #rgb / #rrggbb colour, or the default: brand colours go into CSS. */
export function safeColor(value: string | undefined | null, fallback = '#2f54eb'): string {
  return value && /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(value) ? value : fallback;
}

export interface PageOptions {
  title: string;
  /** Already-escaped HTML of the body; a function receives the page's CSP nonce (for script tags). */
  body: string | ((nonce: string) => string);
  /** Origins added to `script-src` and `frame-src` (an embedded widget such as Telegram's). */
  allow?: { scripts?: string[]; frames?: string[] };
  primaryColor?: string | null;
  /** Inline script source (trusted, ours); runs under the page's CSP nonce. */
  script?: string;
  status?: number;
}

const STYLE = (color: string) => `
:root { --brand: ${color}; }
* { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f5f6f8; color: #1f2328; }
main { max-width: 420px; margin: 8vh auto; background: #fff; border-radius: 12px; padding: 32px; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
header { text-align: center; margin-bottom: 24px; }
header img { max-height: 56px; max-width: 200px; }
h1 { font-size: 1.3rem; margin: 12px 0 4px; }
p.sub { color: #59636e; margin: 0; }
button, .button { display: block; width: 100%; padding: 12px; margin: 10px 0; border-radius: 8px; border: 1px solid var(--brand); background: var(--brand); color: #fff; font-size: 1rem; cursor: pointer; text-align: center; text-decoration: none; }
button.secondary, .button.secondary { background: #fff; color: var(--brand); }
ul.scopes { padding-left: 20px; }
ul.scopes li { margin: 6px 0; }
.status { min-height: 1.4em; color: #59636e; text-align: center; }
.error { color: #b42318; }
footer { margin-top: 24px; text-align: center; font-size: .85rem; }
footer a { color: #59636e; margin: 0 8px; }
input[type=text] { width: 100%; padding: 10px; font-size: 1.1rem; border-radius: 8px; border: 1px solid #d0d7de; letter-spacing: .1em; text-transform: uppercase; }
[hidden] { display: none !important; }
`;

/**
 * Sends a hosted page: no framing (CSP frame-ancestors and X-Frame-Options), no caching, and
 * nothing runs but our own inline script and style, which carry this response's nonce.
 */
export function sendPage(reply: FastifyReply, opts: PageOptions): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    ['script-src', ...(opts.allow?.scripts ?? []), `'nonce-${nonce}'`].join(' '),
    ...(opts.allow?.frames?.length ? [['frame-src', ...opts.allow.frames].join(' ')] : []),
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(opts.title)}</title>
<style nonce="${nonce}">${STYLE(safeColor(opts.primaryColor))}</style>
</head>
<body>
<main>
${typeof opts.body === 'function' ? opts.body(nonce) : opts.body}
</main>
${opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : ''}
</body>
</html>`;
  return reply
    .code(opts.status ?? 200)
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** A page that only states an error (authorize errors about the client or redirect URI, …). */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  error: string,
  description: string,
  title = 'This sign-in request cannot be completed',
): FastifyReply {
  reply.errorCode = error; // the request's log line names it
  return sendPage(reply, {
    title,
    status,
    body: `<header><h1>${esc(title)}</h1></header>
<p class="error" id="error-code">${esc(error)}</p>
<p id="error-description">${esc(description)}</p>`,
  });
}

/** The page for a sign-in link whose interaction expired or was already completed. */
export function sendExpiredSigninPage(reply: FastifyReply): FastifyReply {
  return sendErrorPage(
    reply,
    404,
    'not_found',
    'This sign-in link has expired or was already used. Start again from the app.',
  );
}
