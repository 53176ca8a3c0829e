import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { authorizeQuery, seedClient, type SeededClient } from '../helpers/signin.js';
import { providerWorld, type ProviderWorld } from './setup.js';
import { freePort } from '../helpers/net.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';

describe('hosted sign-in page with upstream providers, in headless Chromium', () => {
  let w: ProviderWorld;
  let browser: Browser;
  let base: string;
  let client: SeededClient;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    w = await providerWorld({ BASE_URL: base });
    await w.t.app.listen({ port, host: '127.0.0.1' });
    client = await seedClient(w.t, {
      firstParty: true,
      redirectUris: [`${w.mock.url}/app/callback`],
      brand: { providerOrder: ['discord', 'google', 'solana', 'apple'] },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await w?.close();
  });

  async function openSignin() {
    const page = await browser.newPage();
    await page.goto(`${base}/oauth2/authorize?${authorizeQuery(client)}`);
    await page.waitForURL(/\/signin\/[A-Za-z0-9]+$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    return { page, id };
  }

  it('shows the brand’s enabled providers in providerOrder', async () => {
    const { page, id } = await openSignin();
    const shown = await page.$$eval('[data-provider]', (els) =>
      els.map((e) => e.getAttribute('data-provider')),
    );
    // Read in the page: only the browser that started the sign-in (its binding cookie) may.
    const api = await page.evaluate(async (url) => (await fetch(url)).json(), `/interactions/${id}`);
    assert.deepEqual(shown, api.providers);
    assert.deepEqual(shown.slice(0, 4), ['discord', 'google', 'solana', 'apple']);
    for (const p of ['x', 'facebook', 'microsoft', 'matrica', 'telegram']) assert.ok(shown.includes(p));
    await page.close();
  });

  it('Google: click, the mock provider redirects back, the app receives a code', async () => {
    const { page } = await openSignin();
    await page.click('#provider-google');
    await page.waitForURL(/\/app\/callback\?/);
    const url = new URL(page.url());
    assert.equal(`${url.origin}${url.pathname}`, client.redirectUri);
    assert.ok(url.searchParams.get('code'));
    assert.ok(url.searchParams.get('state')?.startsWith('st-'));
    assert.match((await page.textContent('body')) ?? '', /app callback reached/);
    await page.close();
  });

  it('Apple: the provider’s form_post comes back through the browser to a code', async () => {
    const { page } = await openSignin();
    await page.click('#provider-apple');
    await page.waitForURL(/\/app\/callback\?/);
    assert.ok(new URL(page.url()).searchParams.get('code'));
    await page.close();
  });

  it('a cancel at the provider lands back on the sign-in page with the reason', async () => {
    const { page, id } = await openSignin();
    w.mock.realms.get('discord')!.nextAuthorizeError = 'access_denied';
    await page.click('#provider-discord');
    await page.waitForURL(new RegExp(`/signin/${id}\\?error=cancelled$`));
    assert.ok(await page.isVisible('#provider-discord'));
    assert.equal(await page.textContent('#status'), 'Sign-in was cancelled. Choose a way to continue.');
    await page.close();
  });
});
