import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';
import { ApiError } from '../../src/http/errors.js';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import { pageAssetRoutes } from '../../src/oidc/pages/assets.js';
import { sendSignedOutPage } from '../../src/oidc/pages/html.js';
import { sendRequirementUnavailablePage } from '../../src/oidc/signin/device-pages.js';
import { sendLinkResultPage, sendTelegramWidgetPage } from '../../src/oidc/signin/provider-pages.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { type SeededClient, authorizeQuery, requireGatePolicy, seedClient } from '../helpers/signin.js';
import { type TestWallet, createTestWallet } from '../helpers/wallet.js';

/**
 * Every hosted page in headless Chromium, driven as a person would: by role and accessible name,
 * with a fake wallet in the page (an injected `window.phantom.solana` provider and a Wallet
 * Standard wallet registered through `wallet-standard:register-wallet`) signing with a real
 * Ed25519 key. Each page is scanned with axe-core (no serious or critical violations, light and
 * dark) and photographed at 1280 and 390 px into test-artifacts/pages/.
 */

const ARTIFACTS = 'test-artifacts/pages';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const APP_ORIGIN = 'https://app.example.com';
const STANDARD_WALLET = 'Test Standard Wallet';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let t: TestApp;
let base: string;
let browser: Browser;
let sunny: SeededClient;
let night: SeededClient;
let tv: SeededClient;
/** Requires a gate policy no wallet passes (its one gate is off: no RPC is asked). */
let members: SeededClient;
let extras: FastifyInstance;
let extrasBase: string;
/** The keys behind the fake wallets of the page being driven. */
const signers: Record<string, TestWallet> = {};

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required (apt-get install -y chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await buildTestApp({ env: { BASE_URL: base, RATE_LIMIT_MULTIPLIER: '100' } });
  await t.app.listen({ port, host: '127.0.0.1' });
  sunny = await seedClient(t, {
    redirectUris: [`${APP_ORIGIN}/callback`],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    brand: { name: 'Sunny Wallet Club', primaryColor: '#fde047' },
  });
  night = await seedClient(t, {
    redirectUris: [`${APP_ORIGIN}/callback`],
    brand: { name: 'Midnight Labs', primaryColor: '#1e1b4b' },
  });
  tv = await seedClient(t, {
    brandId: sunny.brandId,
    orgId: sunny.orgId,
    grantTypes: ['authorization_code', DEVICE_GRANT],
  });
  members = await seedClient(t, {
    brandId: sunny.brandId,
    orgId: sunny.orgId,
    redirectUris: [`${APP_ORIGIN}/callback`],
  });
  await requireGatePolicy(t, members, { mint: createTestWallet().address, enabled: false });
  // Names people would see, a logo and a support address for Sunny, so its pages show them.
  for (const [client, name] of [
    [sunny, 'Sunny Shop'],
    [night, 'Night Owl Notes'],
    [tv, 'Sunny TV'],
    [members, 'Sunny Lounge'],
  ] as const)
    await t.ctx.db.updateTable('apps').set({ name }).where('id', '=', client.appId).execute();
  const logoId = newId('file_');
  const logo = readFileSync(new URL('./logo.png', import.meta.url));
  await t.ctx.db
    .insertInto('files')
    .values({
      id: logoId,
      file_key: `${randomAlphanumeric(24)}.png`,
      content_type: 'image/png',
      bytes: logo.length,
      data: logo,
      owner_user_id: null,
      created_at: t.clock.now(),
    })
    .execute();
  await t.ctx.db
    .updateTable('brands')
    .set({ logo_file_id: logoId, support_email: 'help@sunny.example' })
    .where('id', '=', sunny.brandId)
    .execute();

  // Pages no route of the service shows yet (the signed-out page awaits the logout endpoint).
  extras = Fastify();
  await extras.register(pageAssetRoutes);
  extras.get('/signed-out', (_req, reply) =>
    sendSignedOutPage(reply, { brand: { name: 'Sunny Wallet Club', primaryColor: '#fde047' } }),
  );
  extras.get('/link-result', (_req, reply) =>
    sendLinkResultPage(reply, {
      status: 409,
      title: 'Google account not linked',
      message: 'That Google account already belongs to another user.',
    }),
  );
  extras.get('/telegram', (_req, reply) =>
    sendTelegramWidgetPage(reply, {
      botUsername: 'sunny_bot',
      authUrl: 'https://example.invalid/callback',
      title: 'Continue with Telegram',
      back: '/signed-out',
    }),
  );
  extras.get('/device-unavailable', (_req, reply) =>
    sendRequirementUnavailablePage(
      reply,
      new ApiError(
        503,
        'temporarily_unavailable',
        'the wallet requirements could not be checked now; try again',
      ),
      { locale: 'en', brand: { name: 'Sunny Wallet Club', primaryColor: '#fde047' }, userCode: 'WXYZWXYZ' },
    ),
  );
  const extrasPort = await freePort();
  await extras.listen({ port: extrasPort, host: '127.0.0.1' });
  extrasBase = `http://127.0.0.1:${extrasPort}`;

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await extras?.close();
  await t?.close();
});

// ---- The fake wallets ----

/** Page code (a string: the test transpiler's helpers do not exist in the page). */
function walletScript(opts: { standard?: boolean; phantom?: boolean; reject?: boolean }): string {
  return `(() => {
  const calls = { push: (call) => window.__ghWalletLog(call) };
  const REJECT = ${Boolean(opts.reject)};
  const toB64 = (bytes) => { let s = ''; for (const b of bytes) s += String.fromCharCode(b); return btoa(s); };
  const fromB64 = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const sign = async (which, bytes) => fromB64(await window.__ghWalletSign(which, toB64(bytes)));
  const refuse = () => { const e = new Error('User rejected the request.'); e.code = 4001; throw e; };
  if (${Boolean(opts.phantom)}) {
    const address = ${JSON.stringify(signers.phantom?.address ?? '')};
    const provider = {
      isPhantom: true,
      publicKey: null,
      async connect() {
        calls.push('phantom:connect');
        this.publicKey = { toBase58: () => address, toString: () => address };
        return { publicKey: this.publicKey };
      },
      async signMessage(bytes) {
        calls.push('phantom:signMessage');
        if (REJECT) refuse();
        return { signature: await sign('phantom', bytes), publicKey: this.publicKey };
      },
    };
    window.phantom = { solana: provider };
  }
  if (${Boolean(opts.standard)}) {
    const account = {
      address: ${JSON.stringify(signers.standard?.address ?? '')},
      publicKey: new Uint8Array(32),
      chains: ['solana:mainnet'],
      features: ['solana:signIn', 'solana:signMessage'],
    };
    // The Sign-In With Solana text a wallet builds from signIn's input (the reference algorithm).
    const text = (i) => {
      let m = i.domain + ' wants you to sign in with your Solana account:\\n' + account.address;
      if (i.statement) m += '\\n\\n' + i.statement;
      const f = [];
      if (i.uri) f.push('URI: ' + i.uri);
      if (i.version) f.push('Version: ' + i.version);
      if (i.chainId) f.push('Chain ID: ' + i.chainId);
      if (i.nonce) f.push('Nonce: ' + i.nonce);
      if (i.issuedAt) f.push('Issued At: ' + i.issuedAt);
      if (i.expirationTime) f.push('Expiration Time: ' + i.expirationTime);
      if (i.resources) { f.push('Resources:'); for (const r of i.resources) f.push('- ' + r); }
      if (f.length) m += '\\n\\n' + f.join('\\n');
      return m;
    };
    const wallet = {
      version: '1.0.0',
      name: ${JSON.stringify(STANDARD_WALLET)},
      icon: 'data:image/svg+xml;base64,' + btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#7c3aed"/><circle cx="16" cy="16" r="8" fill="#fff"/></svg>'),
      chains: ['solana:mainnet', 'solana:devnet'],
      accounts: [],
      features: {
        'standard:connect': { version: '1.0.0', connect: async () => {
          calls.push('standard:connect');
          wallet.accounts = [account];
          return { accounts: [account] };
        } },
        'standard:events': { version: '1.0.0', on: () => () => {} },
        'solana:signIn': { version: '1.0.0', signIn: async (...inputs) => {
          calls.push('standard:signIn');
          if (REJECT) refuse();
          return Promise.all(inputs.map(async (input) => {
            const signedMessage = new TextEncoder().encode(text(input));
            return { account, signedMessage, signature: await sign('standard', signedMessage) };
          }));
        } },
        'solana:signMessage': { version: '1.0.0', signMessage: async (...inputs) => {
          calls.push('standard:signMessage');
          if (REJECT) refuse();
          return Promise.all(inputs.map(async ({ message }) => ({ signedMessage: message, signature: await sign('standard', message) })));
        } },
      },
    };
    const callback = ({ register }) => register(wallet);
    try { window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback })); } catch (e) {}
    try { window.addEventListener('wallet-standard:app-ready', ({ detail: api }) => callback(api)); } catch (e) {}
  }
})();`;
}

interface Session {
  context: BrowserContext;
  page: Page;
  errors: string[];
  /** What the page asked of the fake wallets, in order. */
  calls: string[];
}

/** A fresh browser profile with the chosen wallets installed and the app's callback answered. */
async function open(
  wallets: { standard?: boolean; phantom?: boolean; reject?: boolean } = {},
  colorScheme: 'light' | 'dark' = 'light',
): Promise<Session> {
  if (wallets.standard) signers.standard = createTestWallet();
  if (wallets.phantom) signers.phantom = createTestWallet();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme });
  const calls: string[] = [];
  await context.exposeFunction('__ghWalletLog', (call: string) => {
    calls.push(call);
  });
  await context.exposeFunction('__ghWalletSign', (which: string, b64: string) =>
    signers[which].signBytes(Buffer.from(b64, 'base64')).toString('base64'),
  );
  if (wallets.standard || wallets.phantom) await context.addInitScript(walletScript(wallets));
  await context.route(`${APP_ORIGIN}/**`, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: '<!doctype html><html lang="en"><title>App</title><h1>App callback reached</h1></html>',
    }),
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { context, page, errors, calls };
}

// ---- Checks every page gets ----

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** Every WCAG 2.x A/AA rule and axe's best practices; `contrastOnly` for a re-run in another theme. */
/**
 * The consent view with its script running. The buttons are in the server's HTML, the script that
 * makes them work is deferred: they come disabled and it enables them once it has bound them.
 */
async function consentShown(page: Page): Promise<void> {
  await page.locator('#consent-allow:enabled').waitFor();
}

async function axe(page: Page, contrastOnly = false): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const only = contrastOnly
    ? "{ type: 'rule', values: ['color-contrast'] }"
    : "{ type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] }";
  return (await page.evaluate(
    `axe.run(document, { runOnly: ${only} }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
}

/** Every finding axe reported, for the record (the test fails on serious and critical ones). */
const findings = new Map<string, string[]>();

/**
 * axe (all rules in light, contrast again in dark), the `lang` attribute, then screenshots at 1280 and 390 px wide (and a
 * dark one at 390). Leaves the page as it found it.
 */
async function inspect(page: Page, name: string): Promise<void> {
  // Styles and images loaded (a page shown by a script's navigation may still be loading them).
  await page.waitForLoadState('load');
  assert.equal(await page.getAttribute('html', 'lang'), 'en', `${name}: lang`);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    // The dark theme changes colours only: its re-run checks contrast.
    const violations = await axe(page, scheme === 'dark');
    findings.set(
      `${name} (${scheme})`,
      violations.map((v) => `${v.impact}: ${v.id}`),
    );
    const blocking = violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(blocking, [], `${name} (${scheme}) axe`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: `${ARTIFACTS}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${ARTIFACTS}/${name}-390.png`, fullPage: true });
  // Nothing may overflow sideways on a phone.
  const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
  assert.ok(Number(overflow) <= 0, `${name}: ${overflow}px wider than a 390 px phone`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: `${ARTIFACTS}/${name}-390-dark.png`, fullPage: true });
  await page.emulateMedia({ colorScheme: null });
  await page.setViewportSize({ width: 1280, height: 800 });
}

// WCAG 2.2 contrast from rendered colours (an independent copy of the formula, on purpose).
function rgbOf(css: string): [number, number, number] {
  const m = css.match(/rgba?\(\s*(\d+)[,\s]+(\d+)[,\s]+(\d+)/);
  assert.ok(m, `not an rgb() colour: ${css}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
function ratio(a: string, b: string): number {
  const lum = (c: [number, number, number]) => {
    const [r, g, bl] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(rgbOf(a)), lum(rgbOf(b))].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
async function colours(page: Page, selector: string): Promise<{ color: string; background: string }> {
  await page.waitForLoadState('load');
  return (await page.evaluate(
    `(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return { color: s.color, background: s.backgroundColor }; })()`,
  )) as { color: string; background: string };
}

// ---- Flows ----

async function startSignin(s: Session, client: SeededClient, extra: Record<string, string> = {}) {
  const state = `st-${randomAlphanumeric(8)}`;
  await s.page.goto(`${base}/oauth2/authorize?${authorizeQuery(client, { state, ...extra })}`);
  await s.page.waitForURL(/\/signin\/[A-Za-z0-9]+$/);
  return { state, id: new URL(s.page.url()).pathname.split('/').pop() as string };
}

const walletButton = (page: Page, name: string) =>
  page.getByRole('button', { name: `Continue with ${name}` });

async function signInWith(page: Page, name: string) {
  await walletButton(page, name).click();
}

async function startDevice(client: SeededClient) {
  const res = await fetch(`${base}/oauth2/device/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: client.clientId, scope: 'openid profile' }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { device_code: string; user_code: string; verification_uri_complete: string };
}

/** The device's polling client: one token request, a polling interval after the last. */
async function poll(client: SeededClient, deviceCode: string) {
  t.clock.advance(10);
  const res = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
      client_id: client.clientId,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('hosted pages in headless Chromium', () => {
  after(() => {
    // The record the report cites: every axe finding, whatever its impact.
    const lines = [...findings].map(([page, list]) => `${page}: ${list.join(', ') || 'none'}`);
    if (process.env.PAGES_AXE_REPORT) console.log(lines.join('\n'));
  });

  it('sign-in lists every wallet; a Wallet Standard wallet signs in with solana:signIn; consent → the app', async () => {
    const s = await open({ standard: true, phantom: true });
    try {
      const { state } = await startSignin(s, sunny);
      await assertVisible(s.page.getByRole('heading', { name: 'Sign in' }));
      await assertVisible(s.page.getByRole('img', { name: 'Sunny Wallet Club logo' }));
      await assertVisible(walletButton(s.page, STANDARD_WALLET));
      await assertVisible(walletButton(s.page, 'Phantom'));
      // The brand's logo is the favicon too.
      assert.equal(
        await s.page.getAttribute('link[rel=icon]', 'href'),
        await s.page.getAttribute('#brand-logo', 'src'),
      );
      await inspect(s.page, 'signin');

      await signInWith(s.page, STANDARD_WALLET);
      const consent = s.page.getByRole('heading', {
        name: 'Sunny Shop wants to access your Sunny Wallet Club account',
      });
      await consent.waitFor();
      const who = signers.standard.address;
      assert.equal(
        (await s.page.locator('#signed-in-as').innerText()).replace(/\s+/g, ' ').trim(),
        `Signed in as ${who.slice(0, 4)}…${who.slice(-4)} Use another wallet`,
      );
      const lines = await s.page.locator('#consent-scopes li').allInnerTexts();
      assert.ok(!lines.some((l) => /email/i.test(l)), `no email line for an account without one: ${lines}`);
      assert.equal(lines.length, 2, String(lines));
      await inspect(s.page, 'consent');
      assert.deepEqual(s.calls, ['standard:connect', 'standard:signIn'], 'solana:signIn, not signMessage');

      await Promise.all([
        s.page.waitForURL(new RegExp(`^${APP_ORIGIN}/callback\\?`)),
        s.page.getByRole('button', { name: 'Allow' }).click(),
      ]);
      const back = new URL(s.page.url());
      assert.ok(back.searchParams.get('code'));
      assert.equal(back.searchParams.get('state'), state);
      assert.deepEqual(s.errors, []);
    } finally {
      await s.context.close();
    }
  });

  it('an injected Phantom provider signs with signMessage; Deny returns access_denied to the app', async () => {
    const s = await open({ phantom: true });
    try {
      const { state } = await startSignin(s, night);
      await signInWith(s.page, 'Phantom');
      await consentShown(s.page);
      assert.deepEqual(s.calls, ['phantom:connect', 'phantom:signMessage']);
      await Promise.all([
        s.page.waitForURL(new RegExp(`^${APP_ORIGIN}/callback\\?`)),
        s.page.getByRole('button', { name: 'Deny' }).click(),
      ]);
      const back = new URL(s.page.url());
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), state);
      assert.deepEqual(s.errors, []);
    } finally {
      await s.context.close();
    }
  });

  it('consent’s buttons are disabled until the page script has bound them: an early press is never lost', async () => {
    const s = await open({ phantom: true });
    let release = () => {};
    try {
      const { state } = await startSignin(s, night);
      await signInWith(s.page, 'Phantom');
      await consentShown(s.page);
      // A slow connection: the consent page comes, its deferred script is held back.
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let requested = () => {};
      const scriptAsked = new Promise<void>((resolve) => {
        requested = resolve;
      });
      await s.page.route('**/static/signin.js*', async (route) => {
        requested();
        await held;
        await route.continue();
      });
      const consentCalls: string[] = [];
      s.page.on('request', (r) => {
        if (r.url().endsWith('/consent')) consentCalls.push(r.method());
      });
      await s.page.reload({ waitUntil: 'commit' });
      const allow = s.page.getByRole('button', { name: 'Allow' });
      await allow.waitFor();
      await scriptAsked;
      for (const name of ['Allow', 'Deny', 'Use another wallet'])
        assert.ok(
          await s.page.getByRole('button', { name }).isDisabled(),
          `${name} disabled before the script`,
        );
      await s.page.screenshot({ path: `${ARTIFACTS}/consent-before-script-1280.png`, fullPage: true });
      // A person presses Allow now: nothing is sent, nothing happens, the page stays.
      const box = await allow.boundingBox();
      assert.ok(box);
      await s.page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      assert.deepEqual(consentCalls, []);
      assert.match(s.page.url(), /\/signin\/[A-Za-z0-9]+$/);

      release();
      await consentShown(s.page);
      for (const name of ['Allow', 'Deny', 'Use another wallet'])
        assert.ok(await s.page.getByRole('button', { name }).isEnabled(), `${name} enabled by the script`);
      await Promise.all([s.page.waitForURL(new RegExp(`^${APP_ORIGIN}/callback\\?`)), allow.click()]);
      const back = new URL(s.page.url());
      assert.ok(back.searchParams.get('code'));
      assert.equal(back.searchParams.get('state'), state);
      assert.deepEqual(consentCalls, ['POST']);
      assert.deepEqual(s.errors, []);
    } finally {
      release();
      await s.context.close();
    }
  });

  it('“Use another wallet” on consent signs in again with the other wallet', async () => {
    const s = await open({ standard: true, phantom: true });
    try {
      await startSignin(s, sunny);
      await signInWith(s.page, 'Phantom');
      await s.page.getByRole('button', { name: 'Use another wallet' }).click();
      // Focus moves to the sign-in heading, so a screen reader hears where it is.
      assert.equal(await s.page.evaluate('document.activeElement.id'), 'signin-heading');
      await signInWith(s.page, STANDARD_WALLET);
      await consentShown(s.page);
      const who = signers.standard.address;
      assert.match(await s.page.locator('#signed-in-as').innerText(), new RegExp(`${who.slice(0, 4)}…`));
    } finally {
      await s.context.close();
    }
  });

  it('an app requiring a gate policy the wallet fails: a page in the policy’s words, back to the app with access_denied', async () => {
    const s = await open({ phantom: true });
    try {
      const { state } = await startSignin(s, members);
      await signInWith(s.page, 'Phantom');
      await s.page.waitForURL(/\/signin\/[A-Za-z0-9]+\/unmet$/);
      await assertVisible(
        s.page.getByRole('heading', { name: "You can't sign in to Sunny Lounge with this account" }),
      );
      await assertVisible(s.page.getByRole('heading', { name: 'What Sunny Lounge requires' }));
      await assertVisible(s.page.getByText('Hold the Sun token in a wallet linked to your account.'));
      await inspect(s.page, 'gate-requirement');
      await Promise.all([
        s.page.waitForURL(new RegExp(`^${APP_ORIGIN}/callback\\?`)),
        s.page.getByRole('link', { name: 'Back to Sunny Lounge' }).click(),
      ]);
      const back = new URL(s.page.url());
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(
        back.searchParams.get('error_description'),
        "wallet does not meet the app's access requirements",
      );
      assert.equal(back.searchParams.get('state'), state);
      // The page answers 403 on purpose (the browser logs the status); nothing else went wrong.
      assert.deepEqual(
        s.errors.filter((e) => !e.includes('status of 403')),
        [],
      );
    } finally {
      await s.context.close();
    }
  });

  it('the keyboard alone signs in, with a visible focus ring', async () => {
    const s = await open({ phantom: true });
    try {
      await startSignin(s, night);
      await walletButton(s.page, 'Phantom').waitFor();
      let reached = false;
      const seen: string[] = [];
      for (let i = 0; i < 10 && !reached; i++) {
        await s.page.keyboard.press('Tab');
        const text = String(await s.page.evaluate('document.activeElement.textContent'));
        seen.push(text);
        reached = text.includes('Continue with Phantom');
      }
      assert.ok(reached, `Tab reaches the wallet button: ${seen.join(' | ')}`);
      const ring = (await s.page.evaluate(
        '(() => { const s = getComputedStyle(document.activeElement); return { style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor, card: getComputedStyle(document.querySelector("main")).backgroundColor }; })()',
      )) as { style: string; width: number; color: string; card: string };
      assert.notEqual(ring.style, 'none');
      assert.ok(ring.width >= 2, `outline ${ring.width}px`);
      assert.ok(ratio(ring.color, ring.card) >= 3, `focus ring contrast ${ratio(ring.color, ring.card)}`);
      await s.page.keyboard.press('Enter');
      await consentShown(s.page);
      await s.page.getByRole('button', { name: 'Allow' }).focus();
      await Promise.all([
        s.page.waitForURL(new RegExp(`^${APP_ORIGIN}/callback\\?`)),
        s.page.keyboard.press('Enter'),
      ]);
    } finally {
      await s.context.close();
    }
  });

  it('a wallet that refuses is told in user words, announced in a status region', async () => {
    const s = await open({ phantom: true, reject: true });
    try {
      await startSignin(s, sunny);
      await signInWith(s.page, 'Phantom');
      const status = s.page.getByRole('status');
      await s.page.locator('#status', { hasText: 'did not approve' }).waitFor();
      assert.equal(
        await status.innerText(),
        'The wallet did not approve the request. Try again when you are ready.',
      );
      assert.ok(await walletButton(s.page, 'Phantom').isEnabled(), 'the button works again');
      await inspect(s.page, 'signin-rejected');
    } finally {
      await s.context.close();
    }
  });

  it('without a wallet the page says what to do and links to Phantom, Solflare and Backpack', async () => {
    const s = await open();
    try {
      await startSignin(s, sunny);
      await s.page.getByText('No Solana wallet was found in this browser.').waitFor();
      for (const [name, href] of [
        ['Phantom', 'https://phantom.com/download'],
        ['Solflare', 'https://solflare.com/download'],
        ['Backpack', 'https://backpack.app/download'],
      ])
        assert.equal(await s.page.getByRole('link', { name: `Get ${name}` }).getAttribute('href'), href);
      await inspect(s.page, 'signin-no-wallet');
    } finally {
      await s.context.close();
    }
  });

  it('consent lists the email only when the account has one, and shows it', async () => {
    const s = await open({ phantom: true });
    try {
      await startSignin(s, sunny, { scope: 'openid email' });
      await signInWith(s.page, 'Phantom');
      await consentShown(s.page);
      assert.deepEqual(await s.page.locator('#consent-scopes li').allInnerTexts(), [
        'Know who you are on Sunny Wallet Club',
      ]);
      const owner = await t.ctx.db
        .selectFrom('user_public_keys')
        .select('user_id')
        .where('address', '=', signers.phantom.address)
        .executeTakeFirstOrThrow();
      await t.ctx.db
        .updateTable('users')
        .set({ email: 'ada@example.com' })
        .where('id', '=', owner.user_id)
        .execute();
      await s.page.reload();
      assert.deepEqual(await s.page.locator('#consent-scopes li').allInnerTexts(), [
        'Know who you are on Sunny Wallet Club',
        'See your email address (ada@example.com)',
      ]);
    } finally {
      await s.context.close();
    }
  });

  it('button text keeps 4.5:1 on a light (#fde047) and a dark (#1e1b4b) brand, in both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const s = await open({ phantom: true }, scheme);
      try {
        for (const [client, name] of [
          [sunny, 'light-brand'],
          [night, 'dark-brand'],
        ] as const) {
          await startSignin(s, client);
          await signInWith(s.page, 'Phantom');
          await consentShown(s.page);
          const allow = await colours(s.page, '#consent-allow');
          assert.ok(
            ratio(allow.color, allow.background) >= 4.5,
            `${name} ${scheme} Allow: ${JSON.stringify(allow)}`,
          );
          const deny = await colours(s.page, '#consent-deny');
          assert.ok(
            ratio(deny.color, deny.background) >= 4.5,
            `${name} ${scheme} Deny: ${JSON.stringify(deny)}`,
          );
          const card = await colours(s.page, 'main');
          const link = await colours(s.page, '#switch-account');
          assert.ok(
            ratio(link.color, card.background) >= 4.5,
            `${name} ${scheme} link: ${link.color} on ${card.background}`,
          );
          const text = await colours(s.page, '#consent-view p');
          assert.ok(ratio(text.color, card.background) >= 4.5, `${name} ${scheme} text`);
          if (scheme === 'dark')
            assert.ok(ratio(card.background, 'rgb(0, 0, 0)') < 2, 'the dark theme is dark');
          await s.page.screenshot({ path: `${ARTIFACTS}/consent-${name}-${scheme}.png`, fullPage: true });
          await s.context.clearCookies();
        }
      } finally {
        await s.context.close();
      }
    }
  });

  it('device: code entry by keyboard, sign-in, Approve ends on a clear page and the device gets tokens', async () => {
    const s = await open({ phantom: true });
    try {
      const d = await startDevice(tv);
      assert.equal((await poll(tv, d.device_code)).body.error, 'authorization_pending');
      await s.page.goto(`${base}/device`);
      await inspect(s.page, 'device-code');
      const field = s.page.getByRole('textbox', { name: 'Device code' });
      await field.focus();
      await s.page.keyboard.type(d.user_code);
      await s.page.keyboard.press('Enter');
      await s.page.waitForURL(/\/signin\//);
      await signInWith(s.page, 'Phantom');
      await s.page.getByRole('button', { name: 'Approve' }).waitFor();
      assert.equal(await s.page.locator('#device-code').innerText(), d.user_code.toUpperCase());
      await inspect(s.page, 'device-confirm');
      await s.page.getByRole('button', { name: 'Approve' }).click();
      await s.page.getByRole('heading', { name: 'Device connected' }).waitFor();
      assert.match(await s.page.locator('main').innerText(), /You can go back to your device\./);
      await inspect(s.page, 'device-approved');
      const tokens = await poll(tv, d.device_code);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.ok(tokens.body.access_token);
      assert.deepEqual(s.errors, []);
    } finally {
      await s.context.close();
    }
  });

  it('device: Deny ends on a clear page and the device gets access_denied', async () => {
    const s = await open({ standard: true });
    try {
      const d = await startDevice(tv);
      await s.page.goto(d.verification_uri_complete);
      await signInWith(s.page, STANDARD_WALLET);
      await s.page.getByRole('button', { name: 'Deny' }).click();
      await s.page.getByRole('heading', { name: 'Request denied' }).waitFor();
      assert.match(await s.page.locator('main').innerText(), /You can go back to your device\./);
      await inspect(s.page, 'device-denied');
      assert.equal((await poll(tv, d.device_code)).body.error, 'access_denied');
    } finally {
      await s.context.close();
    }
  });

  it('device: a wrong code is announced and marked on the field; a stale form is a page, not JSON', async () => {
    const s = await open({ phantom: true });
    try {
      const wrong = await s.page.goto(`${base}/device?user_code=WXYZ-WXYZ`);
      assert.equal(wrong?.status(), 400);
      await assertVisible(s.page.getByRole('alert'));
      assert.equal(
        await s.page.getByRole('textbox', { name: 'Device code' }).getAttribute('aria-invalid'),
        'true',
      );
      await inspect(s.page, 'device-wrong-code');

      const d = await startDevice(tv);
      await s.page.goto(d.verification_uri_complete);
      await signInWith(s.page, 'Phantom');
      await s.page.getByRole('button', { name: 'Approve' }).waitFor();
      await s.page.evaluate(
        'for (const i of document.querySelectorAll("input[name=csrf_token]")) i.value = "0".repeat(64)',
      );
      const [res] = await Promise.all([
        s.page.waitForResponse((r) => r.url().endsWith('/device/approve')),
        s.page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      assert.equal(res.status(), 403);
      assert.match(res.headers()['content-type'], /^text\/html/);
      await s.page.getByRole('heading', { name: 'Connect a device' }).waitFor();
      assert.equal(await s.page.locator('#error-code').innerText(), 'forbidden');
      await assertVisible(s.page.getByRole('img', { name: 'Sunny Wallet Club logo' }));
      await inspect(s.page, 'error-device-stale');
      assert.equal((await poll(tv, d.device_code)).body.error, 'authorization_pending');
    } finally {
      await s.context.close();
    }
  });

  it('error pages: branded when the brand is known, friendly copy, the code in small print, status kept', async () => {
    const s = await open();
    try {
      const badRedirect = await s.page.goto(
        `${base}/oauth2/authorize?${authorizeQuery(sunny, { redirect_uri: 'https://evil.example/cb' })}`,
      );
      assert.equal(badRedirect?.status(), 400);
      await assertVisible(s.page.getByRole('heading', { name: 'This sign-in request cannot be completed' }));
      await assertVisible(s.page.getByRole('img', { name: 'Sunny Wallet Club logo' }));
      await assertVisible(s.page.getByRole('link', { name: 'help@sunny.example', exact: true }));
      assert.equal(await s.page.locator('#error-code').innerText(), 'invalid_request');
      assert.match(
        await s.page.locator('main').innerText(),
        /The app sent a sign-in request this service cannot accept\./,
      );
      await inspect(s.page, 'error-authorize-branded');

      const unknown = await s.page.goto(
        `${base}/oauth2/authorize?client_id=nobody&redirect_uri=https://x.example/cb`,
      );
      assert.equal(unknown?.status(), 400);
      assert.equal(await s.page.locator('#error-code').innerText(), 'invalid_client');
      assert.equal(await s.page.locator('#brand-logo').count(), 0);
      await inspect(s.page, 'error-authorize-unknown-client');

      const expired = await s.page.goto(`${base}/signin/${randomAlphanumeric(32)}`);
      assert.equal(expired?.status(), 404);
      assert.match(
        await s.page.locator('main').innerText(),
        /This sign-in link has expired or was already used\./,
      );
      await inspect(s.page, 'error-signin-expired');
    } finally {
      await s.context.close();
    }
  });

  it('the signed-out page, the account-link result page and the Telegram widget page', async () => {
    const s = await open();
    // No trip to Telegram from a test: its widget script is refused.
    await s.context.route('https://telegram.org/**', (route) => route.abort());
    try {
      await s.page.goto(`${extrasBase}/signed-out`);
      await assertVisible(s.page.getByRole('heading', { name: 'You are signed out' }));
      assert.match(await s.page.locator('main').innerText(), /You have signed out of Sunny Wallet Club\./);
      await inspect(s.page, 'signed-out');
      const link = await s.page.goto(`${extrasBase}/link-result`);
      assert.equal(link?.status(), 409);
      await assertVisible(s.page.getByRole('heading', { name: 'Google account not linked' }));
      await inspect(s.page, 'link-result');
      await s.page.goto(`${extrasBase}/telegram`);
      await assertVisible(s.page.getByRole('heading', { name: 'Continue with Telegram' }));
      await assertVisible(s.page.getByRole('link', { name: 'Back' }));
      await inspect(s.page, 'telegram');
      // The device page while the chain cannot be read (an app requiring a gate policy): a page, 503.
      const unavailable = await s.page.goto(`${extrasBase}/device-unavailable`);
      assert.equal(unavailable?.status(), 503);
      await assertVisible(s.page.getByRole('heading', { name: 'Connect a device' }));
      assert.equal(await s.page.locator('#error-code').innerText(), 'temporarily_unavailable');
      // A line of its own, not the generic server copy with the developer's reason in small print.
      assert.equal(
        await s.page.locator('p.lead').innerText(),
        'The wallet requirements cannot be checked right now. Try again in a moment.',
      );
      const main = await s.page.locator('main').innerText();
      assert.doesNotMatch(main, /Something went wrong|could not be checked now/);
      assert.equal(
        await s.page.getByRole('link', { name: 'Try again' }).getAttribute('href'),
        '/device?user_code=WXYZWXYZ',
      );
      await inspect(s.page, 'device-requirement-unavailable');
    } finally {
      await s.context.close();
    }
  });
});

async function assertVisible(locator: ReturnType<Page['getByRole']>): Promise<void> {
  await locator.waitFor({ state: 'visible' });
}
