import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { mkdirSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { newId } from '../../src/lib/ids.js';
import { insertWallet } from '../../src/modules/users/users.queries.js';
import { authorizeQuery, requireGatePolicy, seedClient, type SeededClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { FakeSolanaRpc } from '../token-gates/fake-rpc.js';
import { providerWorld, type ProviderWorld } from './setup.js';
import { freePort } from '../helpers/net.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';

const ARTIFACTS = 'test-artifacts/pages';

describe('hosted sign-in page with upstream providers, in headless Chromium', () => {
  let w: ProviderWorld;
  let rpc: FakeSolanaRpc;
  let browser: Browser;
  let base: string;
  let client: SeededClient;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    rpc = await new FakeSolanaRpc().start();
    w = await providerWorld({ BASE_URL: base, SOLANA_RPC_URL: rpc.url });
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
    await rpc?.stop();
  });

  async function openSignin(app: SeededClient = client) {
    const page = await browser.newPage();
    await page.goto(`${base}/oauth2/authorize?${authorizeQuery(app)}`);
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

  it('an app whose wallet requirement cannot be read (RPC down): the page says so, and Allow goes on once it answers', async () => {
    // The Google account, signed in once, has a wallet that meets the requirement of `members`.
    const first = await openSignin();
    await first.page.click('#provider-google');
    await first.page.waitForURL(/\/app\/callback\?/);
    await first.page.close();
    const { user_id: userId } = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('user_id')
      .where('provider', '=', 'google')
      .where('external_user_id', '=', 'g-1001')
      .executeTakeFirstOrThrow();
    const wallet = createTestWallet().address;
    await insertWallet(w.t.ctx.db, {
      id: newId('upk_'),
      userId,
      address: wallet,
      label: null,
      isPrimary: false,
      now: w.t.clock.now(),
    });
    const mint = rpc.addMint();
    rpc.addWallet(wallet);
    rpc.setBalance(wallet, mint, '12');
    const members = await seedClient(w.t, {
      orgId: client.orgId,
      brandId: client.brandId,
      firstParty: true,
      redirectUris: [`${w.mock.url}/app/callback`],
    });
    await requireGatePolicy(w.t, members, { mint, minHoldings: '10', enabled: true });

    const { page, id } = await openSignin(members);
    const message = 'The wallet requirements cannot be checked right now. Try again in a moment.';
    rpc.mode = 'http500';
    try {
      await page.click('#provider-google');
      await page.waitForURL(new RegExp(`/signin/${id}\\?error=requirement_unavailable$`));
      // Signed in: the page goes on at its next step, with the reason (never "something went wrong").
      assert.equal(await page.textContent('#status'), message);
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await page.screenshot({
        path: `${ARTIFACTS}/provider-requirement-unavailable-1280.png`,
        fullPage: true,
      });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({
        path: `${ARTIFACTS}/provider-requirement-unavailable-390.png`,
        fullPage: true,
      });
      // Still down: Allow says the same, and can be pressed again.
      await page.locator('#consent-allow:enabled').click();
      await page.locator('#status', { hasText: 'cannot be checked' }).waitFor();
      assert.equal(await page.textContent('#status'), message);
      await page.locator('#consent-allow:enabled').waitFor();
    } finally {
      rpc.mode = 'ok';
    }
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/\/app\/callback\?/);
    assert.ok(new URL(page.url()).searchParams.get('code'));
    // The sign-in itself succeeded: no failed sign-in in the account's history.
    const failed = await w.t.ctx.db
      .selectFrom('activity')
      .select('type')
      .where('user_id', '=', userId)
      .where('type', '=', 'sign_in_failed')
      .execute();
    assert.deepEqual(failed, []);
    await page.close();
  });
});
