import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { type PageScript, assetUrl } from './assets.js';
import { contrast, inkOn, parseHex, textOn } from './color.js';
import { type Locale, type Translate, translator } from './i18n.js';
import type { MessageKey } from './i18n/en.js';

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

/** The colour pages use when a brand sets none. */
export const DEFAULT_COLOR = '#2f54eb';

/** A #rgb / #rrggbb colour, or the default: brand colours go into CSS. */
export function safeColor(value: string | undefined | null, fallback = DEFAULT_COLOR): string {
  return value && /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(value) ? value : fallback;
}

/** What a page shows of the brand: logo and name in the header, colour, favicon, footer links. */
export interface PageBrand {
  name: string;
  logoUrl?: string | null;
  primaryColor?: string | null;
  supportEmail?: string | null;
  privacyPolicyUrl?: string | null;
  termsUrl?: string | null;
}

export interface PageOptions {
  title: string;
  /** Already-escaped HTML of the body; a function receives the page's CSP nonce (for script tags). */
  body: string | ((nonce: string) => string);
  /** Origins added to `script-src` and `frame-src` (an embedded widget such as Telegram's). */
  allow?: { scripts?: string[]; frames?: string[] };
  /** The brand colour when no `brand` is given. */
  primaryColor?: string | null;
  /** When set, the page carries the brand's header (logo, name), favicon and footer links. */
  brand?: PageBrand | null;
  /** The page's language (`lang`); English by default. */
  locale?: Locale;
  /** Our own script files (served under /static, loaded with the page's nonce; never inline). */
  scripts?: PageScript[];
  status?: number;
  /** Framing by our own origin only (the console's brand preview); never framed otherwise. */
  framedBySelf?: boolean;
}

/** Card and page backgrounds of the two themes (pages.css): brand inks are computed against them. */
const LIGHT_CARD = '#ffffff';
const DARK_CARD = '#161b22';

/**
 * The brand's theme variables: the brand surface and the text on it (black or white, whichever
 * reads), the surface for the dark theme (a brand too dark to stand out on the dark card is
 * lightened to 3:1 against it), and the brand as text (links, focus rings) for each theme (4.5:1).
 */
export function themeVariables(color: string | null | undefined): string {
  const brand = safeColor(color);
  const dark = contrast(parseHex(brand), parseHex(DARK_CARD)) >= 3 ? brand : inkOn(brand, DARK_CARD, 3);
  return [
    `--brand: ${brand}`,
    `--on-brand: ${textOn(brand)}`,
    `--brand-dark: ${dark}`,
    `--on-brand-dark: ${textOn(dark)}`,
    `--ink-light: ${inkOn(brand, LIGHT_CARD)}`,
    `--ink-dark: ${inkOn(brand, DARK_CARD)}`,
  ].join('; ');
}

function monogram(name: string): string {
  return esc([...name.trim()][0]?.toUpperCase() ?? '?');
}

function brandHeader(brand: PageBrand, t: Translate): string {
  const logo = safeUrl(brand.logoUrl);
  return `<header class="brand">
${
  logo
    ? `<img id="brand-logo" src="${esc(logo)}" alt="${esc(t('shell.logoAlt', { brand: brand.name }))}">`
    : `<span class="monogram" aria-hidden="true">${monogram(brand.name)}</span>`
}
<p id="brand-name" class="brand-name">${esc(brand.name)}</p>
</header>`;
}

function brandFooter(brand: PageBrand | null | undefined, t: Translate): string {
  const links: string[] = [];
  const privacy = safeUrl(brand?.privacyPolicyUrl);
  const terms = safeUrl(brand?.termsUrl);
  if (privacy) links.push(`<a id="privacy-link" href="${esc(privacy)}">${esc(t('shell.privacy'))}</a>`);
  if (terms) links.push(`<a id="terms-link" href="${esc(terms)}">${esc(t('shell.terms'))}</a>`);
  if (brand?.supportEmail)
    links.push(
      `<a id="support-link" href="mailto:${esc(encodeURI(brand.supportEmail))}">${esc(
        t('shell.support', { email: brand.supportEmail }),
      )}</a>`,
    );
  return `<footer class="page-footer">
${links.length ? `<nav aria-label="${esc(brand?.name ?? '')}">${links.join('\n')}</nav>` : ''}
<p class="powered">${esc(t('shell.poweredBy'))}</p>
</footer>`;
}

/**
 * Sends a hosted page: no framing (CSP frame-ancestors and X-Frame-Options), no caching, no
 * referrer outside our origin (`same-origin`, so the browser still sends our Origin on the page's
 * own form posts), and nothing runs but our own script files, which carry this response's nonce.
 */
export function sendPage(reply: FastifyReply, opts: PageOptions): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const locale = opts.locale ?? 'en';
  const t = translator(locale);
  const csp = [
    "default-src 'none'",
    ['script-src', ...(opts.allow?.scripts ?? []), `'nonce-${nonce}'`].join(' '),
    ...(opts.allow?.frames?.length ? [['frame-src', ...opts.allow.frames].join(' ')] : []),
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    "connect-src 'self'",
    "form-action 'self'",
    opts.framedBySelf ? "frame-ancestors 'self'" : "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const brand = opts.brand ?? null;
  const color = brand?.primaryColor ?? opts.primaryColor;
  const favicon = safeUrl(brand?.logoUrl) ?? assetUrl('favicon.svg');
  const scripts = (opts.scripts ?? [])
    .map((s) => `<script nonce="${nonce}" src="${esc(assetUrl(`${s}.js`))}" defer></script>`)
    .join('\n');
  const html = `<!doctype html>
<html lang="${esc(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${esc(opts.title)}</title>
<link rel="icon" href="${esc(favicon)}">
<link rel="stylesheet" href="${esc(assetUrl('pages.css'))}">
<style nonce="${nonce}">:root { ${themeVariables(color)}; }</style>
${scripts}
</head>
<body>
<main class="card">
${brand ? brandHeader(brand, t) : ''}
${typeof opts.body === 'function' ? opts.body(nonce) : opts.body}
</main>
${brandFooter(brand, t)}
</body>
</html>`;
  return reply
    .code(opts.status ?? 200)
    .header('content-security-policy', csp)
    .header('x-frame-options', opts.framedBySelf ? 'SAMEORIGIN' : 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

export interface ErrorPageOptions {
  brand?: PageBrand | null;
  locale?: Locale;
  /** A link back (the app), when one is trusted; otherwise the page offers the browser's Back. */
  back?: { href: string; label: string };
}

/** Escapes a translated template and puts trusted `html` where its `{name}` placeholder is. */
export function fill(template: string, name: string, html: string): string {
  return template
    .split(`{${name}}`)
    .map((part) => esc(part))
    .join(html);
}

/** A sentence for people: the description when it is one, else the catalog's line for the status. */
function friendlyMessage(status: number, error: string, description: string, t: Translate): string {
  if (/^[A-Z].*[.!?]$/.test(description)) return description;
  const key: MessageKey =
    status === 404 || error === 'not_found'
      ? 'errorPage.notFound'
      : status === 403
        ? 'errorPage.forbidden'
        : status === 429
          ? 'errorPage.tooMany'
          : status >= 500
            ? 'errorPage.server'
            : 'errorPage.badRequest';
  return t(key);
}

/**
 * A page that states an error (authorize errors about the client or redirect URI, expired links,
 * …): friendly copy, the machine code and description in small print, the brand when known, and a
 * way back. The status code is the caller's.
 */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  error: string,
  description: string,
  title?: string,
  opts: ErrorPageOptions = {},
): FastifyReply {
  reply.errorCode = error; // the request's log line names it
  const t = translator(opts.locale ?? 'en');
  const heading = title ?? t('errorPage.title');
  const message = friendlyMessage(status, error, description, t);
  const detail = message === description ? '' : ` · <span id="error-description">${esc(description)}</span>`;
  const back = opts.back
    ? `<a class="button secondary" id="error-back" href="${esc(opts.back.href)}">${esc(opts.back.label)}</a>`
    : `<button type="button" class="secondary" id="error-back" data-action="back" hidden>${esc(t('errorPage.back'))}</button>`;
  const email = opts.brand?.supportEmail;
  const contact = email
    ? `<p id="error-contact">${fill(
        t('errorPage.contact'),
        'email',
        `<a href="mailto:${esc(encodeURI(email))}">${esc(email)}</a>`,
      )}</p>`
    : '';
  return sendPage(reply, {
    title: heading,
    status,
    brand: opts.brand,
    locale: opts.locale,
    scripts: opts.back ? [] : ['back'],
    body: `<div class="icon-badge error-badge" aria-hidden="true">!</div>
<h1>${esc(heading)}</h1>
<p id="${detail ? 'error-message' : 'error-description'}" class="lead">${esc(message)}</p>
${contact}
${back}
<p class="fine">${fill(t('errorPage.code'), 'code', `<code id="error-code">${esc(error)}</code>`)}${detail}</p>`,
  });
}

/** The page for a sign-in link whose interaction expired or was already completed. */
export function sendExpiredSigninPage(reply: FastifyReply, opts: ErrorPageOptions = {}): FastifyReply {
  const t = translator(opts.locale ?? 'en');
  return sendErrorPage(reply, 404, 'not_found', t('errorPage.expired'), undefined, opts);
}

/**
 * The page a logout ends on when the app gave no `post_logout_redirect_uri`: branded when the
 * session's brand is known.
 */
export function sendSignedOutPage(
  reply: FastifyReply,
  opts: { brand?: PageBrand | null; locale?: Locale; back?: { href: string; label: string } } = {},
): FastifyReply {
  const t = translator(opts.locale ?? 'en');
  const body = opts.brand ? t('signedOut.body', { brand: opts.brand.name }) : t('signedOut.bodyNoBrand');
  return sendPage(reply, {
    title: t('signedOut.title'),
    brand: opts.brand,
    locale: opts.locale,
    body: `<div class="icon-badge ok-badge" aria-hidden="true">✓</div>
<h1 id="signed-out">${esc(t('signedOut.title'))}</h1>
<p class="lead">${esc(body)}</p>
${opts.back ? `<a class="button secondary" href="${esc(opts.back.href)}">${esc(opts.back.label)}</a>` : ''}`,
  });
}
