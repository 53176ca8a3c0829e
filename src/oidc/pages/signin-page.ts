import type { FastifyReply } from 'fastify';
import type { InteractionView } from '../signin/interactions.js';
import { type PageBrand, esc, fill, jsonForScript, safeUrl, sendPage } from './html.js';
import { type Locale, type Translate, translator } from './i18n.js';
import type { MessageKey } from './i18n/en.js';
import type { SignedInAs } from './page-data.js';

const PROVIDER_NAMES: Record<string, string> = {
  google: 'Google',
  apple: 'Apple',
  microsoft: 'Microsoft',
  discord: 'Discord',
  facebook: 'Facebook',
  x: 'X',
  telegram: 'Telegram',
  matrica: 'Matrica',
};

/** Where to get a Solana wallet when the browser has none. */
export const WALLET_INSTALL_LINKS = [
  { name: 'Phantom', href: 'https://phantom.com/download' },
  { name: 'Solflare', href: 'https://solflare.com/download' },
  { name: 'Backpack', href: 'https://backpack.app/download' },
];

/** Strings the page script shows (status and errors), in the page's language. */
const SCRIPT_STRINGS: MessageKey[] = [
  'signin.walletButton',
  'signin.walletDetected',
  'status.connecting',
  'status.approve',
  'status.checking',
  'status.redirecting',
  'status.leaving',
  'error.walletRejected',
  'error.walletNoAccount',
  'error.walletUnsupported',
  'error.signatureInvalid',
  'error.tooSlow',
  'error.expired',
  'error.tooMany',
  'error.network',
  'error.requirementUnavailable',
  'error.generic',
];

const STANDARD_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access', 'wallet', 'gates']);

/**
 * The consent lines, honest about what the app will get: `email` is listed only when the account
 * has an address (and shows it); the standard scopes use the catalog, brand scopes their own text.
 */
export function consentLines(
  scopes: InteractionView['scopes'],
  who: SignedInAs | null,
  brandName: string,
  t: Translate,
): Array<{ name: string; text: string }> {
  const out: Array<{ name: string; text: string }> = [];
  for (const s of scopes) {
    if (s.name === 'email') {
      if (who?.email) out.push({ name: s.name, text: t('scope.email', { email: who.email }) });
      continue;
    }
    const text = STANDARD_SCOPES.has(s.name)
      ? t(`scope.${s.name}` as MessageKey, { brand: brandName })
      : s.description;
    out.push({ name: s.name, text });
  }
  return out;
}

function walletBlock(t: Translate): string {
  const install = WALLET_INSTALL_LINKS.map(
    (w) =>
      `<li><a class="button secondary" href="${esc(w.href)}" rel="noopener noreferrer">${esc(
        t('signin.walletInstall', { wallet: w.name }),
      )}</a></li>`,
  ).join('');
  return `<div id="provider-solana" data-provider="solana" class="wallet-block">
<ul class="wallets" id="wallet-list" aria-label="${esc(t('signin.walletHeading'))}"></ul>
<p class="notice" id="wallet-searching">${esc(t('signin.walletSearching'))}</p>
<noscript><p class="notice">${esc(t('signin.walletNoScript'))}</p></noscript>
<div id="wallet-none" hidden>
<p class="notice">${esc(t('signin.walletNone'))}</p>
<ul class="install-links" id="wallet-install">${install}</ul>
</div>
</div>`;
}

function providerButtons(view: InteractionView, providers: string[], t: Translate): string {
  const parts: string[] = [];
  let previous: 'wallet' | 'other' | null = null;
  for (const p of providers) {
    const kind = p === 'solana' ? 'wallet' : 'other';
    if (previous && previous !== kind)
      parts.push(`<p class="divider" aria-hidden="true">${esc(t('signin.or'))}</p>`);
    previous = kind;
    if (p === 'solana') {
      parts.push(walletBlock(t));
      continue;
    }
    const href = `/interactions/${encodeURIComponent(view.id)}/providers/${encodeURIComponent(p)}`;
    const label = t('signin.provider', { provider: PROVIDER_NAMES[p] ?? p });
    parts.push(
      `<a class="button secondary" id="provider-${esc(p)}" data-provider="${esc(p)}" href="${esc(href)}">${esc(label)}</a>`,
    );
  }
  return parts.join('\n');
}

/**
 * The consent step. Its buttons work through `assets/signin.js`, which is deferred: they come
 * `disabled` and the script enables them once it has bound them, so an early press (a slow
 * connection) never lands on a dead button.
 */
function consentView(view: InteractionView, who: SignedInAs | null, t: Translate): string {
  const app = view.app.name;
  const lines = consentLines(view.scopes, who, view.brand.name, t);
  const whoLine = who
    ? `<p class="who" id="signed-in-as"><span>${fill(
        t('consent.signedInAs'),
        'who',
        `<strong title="${esc(who.full)}">${esc(who.label)}</strong>`,
      )}</span> <button type="button" class="link" id="switch-account" disabled>${esc(
        t(who.wallet ? 'consent.useAnotherWallet' : 'consent.useAnotherAccount'),
      )}</button></p>`
    : '';
  return `<section id="consent-view" aria-labelledby="consent-heading">
<div class="app-line"><span class="app-avatar" aria-hidden="true">${esc([...app.trim()][0]?.toUpperCase() ?? '?')}</span></div>
<h1 id="consent-heading" tabindex="-1">${esc(t('consent.heading', { app, brand: view.brand.name }))}</h1>
${whoLine}
<p>${esc(t('consent.wouldLike', { app }))}</p>
<ul class="scopes" id="consent-scopes">
${lines.map((l) => `<li data-scope="${esc(l.name)}">${esc(l.text)}</li>`).join('\n')}
</ul>
<div class="actions">
<button type="button" class="secondary" id="consent-deny" disabled>${esc(t('consent.deny'))}</button>
<button type="button" id="consent-allow" disabled>${esc(t('consent.allow'))}</button>
</div>
<noscript><p class="notice">${esc(t('consent.noScript'))}</p></noscript>
<p class="note">${esc(t('consent.note'))}</p>
</section>`;
}

/**
 * The hosted sign-in page: the brand's sign-in methods (every wallet the browser offers, then the
 * upstream providers in `providerOrder`), and, once signed in, the consent view. The browser side
 * is `assets/signin.js`, which uses only the headless API.
 */
export function renderSigninPage(
  reply: FastifyReply,
  view: InteractionView,
  opts: {
    preselected?: string;
    baseUrl: string;
    notice?: string;
    locale?: Locale;
    /** Who is signed in (the consent step). */
    who?: SignedInAs | null;
    /** The brand with its support address (the view carries no support email). */
    brand?: PageBrand | null;
    /** The console's brand preview: framed by our own origin. */
    preview?: boolean;
  },
): FastifyReply {
  const locale = opts.locale ?? 'en';
  const t = translator(locale);
  const { app } = view;
  const providers =
    opts.preselected && view.providers.includes(opts.preselected) ? [opts.preselected] : view.providers;
  const consent = view.step === 'consent';
  const strings = Object.fromEntries(SCRIPT_STRINGS.map((k) => [k, t(k)]));
  const body = `<section id="signin-view" aria-labelledby="signin-heading"${consent ? ' hidden' : ''}>
<h1 id="signin-heading" tabindex="-1">${esc(t('signin.heading'))}</h1>
<p class="sub">${fill(t('signin.sub'), 'app', `<strong id="app-name">${esc(app.name)}</strong>`)}</p>
${providerButtons(view, providers, t)}
</section>
${consent ? consentView(view, opts.who ?? null, t) : ''}
<p class="status${opts.notice ? ' error' : ''}" id="status" role="status" aria-live="polite">${esc(opts.notice ?? '')}</p>
<script type="application/json" id="gh-data">${jsonForScript({
    id: view.id,
    step: view.step,
    app: app.name,
    brand: view.brand.name,
    strings,
  })}</script>`;
  const brand: PageBrand = opts.brand ?? {
    name: view.brand.name,
    logoUrl: safeUrl(view.brand.logoUrl),
    primaryColor: view.brand.primaryColor,
    privacyPolicyUrl: view.brand.privacyPolicyUrl,
    termsUrl: view.brand.termsUrl,
  };
  return sendPage(reply, {
    title: consent
      ? t('consent.heading', { app: app.name, brand: view.brand.name })
      : t('signin.title', { app: app.name }),
    body,
    brand,
    locale,
    scripts: ['signin'],
    framedBySelf: opts.preview === true,
  });
}
