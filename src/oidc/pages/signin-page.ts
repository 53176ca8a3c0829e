import type { FastifyReply } from 'fastify';
import type { InteractionView } from '../interactions/interactions.service.js';
import { esc, jsonForScript, safeUrl, sendPage } from './html.js';

const PROVIDER_LABELS: Record<string, string> = {
  solana: 'Continue with a Solana wallet',
  google: 'Continue with Google',
  apple: 'Continue with Apple',
  microsoft: 'Continue with Microsoft',
  discord: 'Continue with Discord',
  facebook: 'Continue with Facebook',
  x: 'Continue with X',
  telegram: 'Continue with Telegram',
  matrica: 'Continue with Matrica',
};

/**
 * The browser side of the headless API: finds a wallet (Wallet Standard first, then an injected
 * `window.phantom.solana` / `window.solana`), asks for a challenge, has the wallet sign it, sends
 * the proof, shows the consent view when asked, and follows `redirectTo`.
 */
const SCRIPT = `(() => {
  const data = JSON.parse(document.getElementById('gh-data').textContent);
  const $ = (id) => document.getElementById(id);
  const status = (msg, isError) => { const s = $('status'); s.textContent = msg; s.className = isError ? 'status error' : 'status'; };
  const api = async (path, body) => {
    const res = await fetch('/interactions/' + encodeURIComponent(data.id) + path, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((json.error && json.error.message) || 'The request failed.');
    return json;
  };
  const b64 = (bytes) => { let s = ''; for (const b of bytes) s += String.fromCharCode(b); return btoa(s); };
  const standardWallets = [];
  const register = (...wallets) => {
    for (const w of wallets) if (w && w.features && w.features['solana:signMessage']) standardWallets.push(w);
    return () => {};
  };
  try {
    window.addEventListener('wallet-standard:register-wallet', (e) => { try { e.detail({ register }); } catch (_) {} });
    window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: { register } }));
  } catch (_) {}
  async function standardWallet() {
    const w = standardWallets[0];
    if (!w) return null;
    let accounts = w.accounts || [];
    if (!accounts.length && w.features['standard:connect']) accounts = (await w.features['standard:connect'].connect()).accounts;
    const account = accounts[0];
    if (!account) return null;
    return { address: account.address, sign: async (message) => (await w.features['solana:signMessage'].signMessage({ account, message }))[0].signature };
  }
  async function injectedWallet() {
    const p = (window.phantom && window.phantom.solana) || window.solana;
    if (!p || typeof p.signMessage !== 'function') return null;
    if (!p.publicKey && typeof p.connect === 'function') await p.connect();
    if (!p.publicKey) return null;
    const address = typeof p.publicKey.toBase58 === 'function' ? p.publicKey.toBase58() : String(p.publicKey);
    return { address, sign: async (message) => { const r = await p.signMessage(message, 'utf8'); return r && r.signature ? r.signature : r; } };
  }
  function showConsent() {
    $('signin-view').hidden = true;
    $('consent-view').hidden = false;
    status('');
  }
  async function signInWithWallet() {
    status('Connecting to your wallet…');
    const wallet = (await standardWallet()) || (await injectedWallet());
    if (!wallet) { status('No Solana wallet was found in this browser.', true); return; }
    const challenge = await api('/wallet/challenge', { address: wallet.address });
    status('Approve the sign-in message in your wallet…');
    const message = new TextEncoder().encode(challenge.message);
    const signature = new Uint8Array(await wallet.sign(message));
    const result = await api('/wallet/verify', { address: wallet.address, signature: b64(signature), signedMessage: b64(message) });
    if (result.step === 'consent') showConsent();
    else { status('Signed in. Redirecting…'); window.location.assign(result.redirectTo); }
  }
  async function decide(decision) {
    const result = await api('/consent', { decision });
    status('Redirecting…');
    window.location.assign(result.redirectTo);
  }
  const guard = (fn) => () => fn().catch((e) => status(e && e.message ? e.message : 'Something went wrong.', true));
  const walletButton = $('provider-solana');
  if (walletButton) walletButton.addEventListener('click', guard(signInWithWallet));
  $('consent-allow').addEventListener('click', guard(() => decide('allow')));
  $('consent-deny').addEventListener('click', guard(() => decide('deny')));
  if (data.step === 'consent') showConsent();
})();`;

export function renderSigninPage(
  reply: FastifyReply,
  view: InteractionView,
  opts: { preselected?: string; baseUrl: string; notice?: string },
): FastifyReply {
  const { brand, app } = view;
  const logo = safeUrl(brand.logoUrl);
  const providers =
    opts.preselected && view.providers.includes(opts.preselected) ? [opts.preselected] : view.providers;
  const buttons = providers
    .map((p) =>
      p === 'solana'
        ? `<button type="button" id="provider-solana" data-provider="solana">${esc(PROVIDER_LABELS.solana)}</button>`
        : `<a class="button secondary" id="provider-${esc(p)}" data-provider="${esc(p)}" href="/interactions/${esc(
            encodeURIComponent(view.id),
          )}/providers/${esc(encodeURIComponent(p))}">${esc(PROVIDER_LABELS[p] ?? `Continue with ${p}`)}</a>`,
    )
    .join('\n');
  const scopes = view.scopes
    .map((s) => `<li data-scope="${esc(s.name)}">${esc(s.description)}</li>`)
    .join('\n');
  const links = [
    safeUrl(brand.privacyPolicyUrl)
      ? `<a id="privacy-link" href="${esc(safeUrl(brand.privacyPolicyUrl))}">Privacy policy</a>`
      : '',
    safeUrl(brand.termsUrl) ? `<a id="terms-link" href="${esc(safeUrl(brand.termsUrl))}">Terms</a>` : '',
  ].join('');
  const body = `<header>
${logo ? `<img id="brand-logo" src="${esc(logo)}" alt="${esc(brand.name)}">` : ''}
<h1 id="brand-name">${esc(brand.name)}</h1>
<p class="sub">to continue to <strong id="app-name">${esc(app.name)}</strong></p>
</header>
<section id="signin-view">
${buttons}
</section>
<section id="consent-view" hidden>
<p><strong>${esc(app.name)}</strong> would like to:</p>
<ul class="scopes" id="consent-scopes">
${scopes}
</ul>
<button type="button" id="consent-allow">Allow</button>
<button type="button" class="secondary" id="consent-deny">Deny</button>
</section>
<p class="status${opts.notice ? ' error' : ''}" id="status" role="status">${esc(opts.notice ?? '')}</p>
<footer>${links}</footer>
<script type="application/json" id="gh-data">${jsonForScript({ id: view.id, step: view.step })}</script>`;
  return sendPage(reply, {
    title: `Sign in to ${brand.name}`,
    body,
    primaryColor: brand.primaryColor,
    script: SCRIPT,
  });
}
