import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';
import { type RunningServer, startServer } from '../helpers/server.js';
import { FakeSolanaRpc } from '../token-gates/fake-rpc.js';
import { ROOT, startExample } from './run.js';

const ARTIFACTS = `${ROOT}test-artifacts/examples`;

/**
 * examples/token-gate-page: the static page on its own origin calls Gatehouse's public check from
 * headless Chromium (a cross-origin fetch), against a fake Solana RPC.
 */
describe('example: token-gate check from a browser page', () => {
  let rpc: FakeSolanaRpc;
  let srv: RunningServer;
  let example: Awaited<ReturnType<typeof startExample>>;
  let browser: Browser;
  let pageUrl: string;
  let holder: string;
  let small: string;
  const requests: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    rpc = await new FakeSolanaRpc().start();
    const mint = rpc.addMint('spl-token');
    holder = rpc.addWallet();
    rpc.addTokenAccount(holder, mint, '1500');
    small = rpc.addWallet();
    rpc.addTokenAccount(small, mint, '10');
    srv = await startServer({ SOLANA_RPC_URL: rpc.url });
    example = await startExample(
      'examples/token-gate-page/serve.mjs',
      { ...srv.env, GATEHOUSE_URL: srv.url, MINT: mint, MIN_HOLDINGS: '1000' },
      /^open (\S+)$/m,
    );
    pageUrl = example.match[1];
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await example?.stop();
    await srv?.stop();
    await rpc?.stop();
  });

  async function check(page: Page, wallet: string): Promise<string> {
    await page.getByLabel('Wallet address').fill(wallet);
    await page.getByRole('button', { name: 'Check access' }).click();
    const status = page.getByRole('status');
    await status.filter({ hasNotText: 'Checking…' }).filter({ hasText: /\S/ }).waitFor();
    return (await status.textContent()) ?? '';
  }

  it('shows access, refusal and a bad address from cross-origin calls to the public check', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (r) => requests.push(r.url()));
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      // The 422 is logged as a failed load like any non-2xx; CORS and CSP refusals are what matter.
      if (m.type() === 'error' && !/status of 422/.test(m.text())) consoleErrors.push(m.text());
    });
    await page.goto(pageUrl);
    assert.notEqual(new URL(pageUrl).origin, new URL(srv.url).origin, 'the page is on another origin');
    await page.getByRole('heading', { name: 'Holders only' }).waitFor();

    assert.equal(await check(page, holder), 'Welcome in: this wallet holds 1500 (raw units).');
    assert.equal(await page.getByRole('status').getAttribute('data-access'), 'granted');
    await page.screenshot({ path: `${ARTIFACTS}/token-gate-page-1280.png`, fullPage: true });

    assert.equal(await check(page, small), 'This wallet does not hold enough of the token.');
    // 40 characters that are not base58 ('0', 'O', 'I', 'l'): the check's 422, read cross-origin.
    assert.equal(
      await check(page, '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl'),
      'Could not check: must be a base58 Solana address (32 bytes)',
    );
    assert.equal(await page.getByRole('status').getAttribute('data-access'), 'error');
    assert.deepEqual(consoleErrors, [], 'no CORS or CSP error in the page');

    const checks = requests.filter((u) => u.includes('/check?'));
    assert.equal(checks.length, 3);
    for (const u of checks) assert.ok(u.startsWith(`${srv.url}/identity/organizations/gate-`), u);
    const outside = requests.filter(
      (u) => !u.startsWith(srv.url) && !u.startsWith(new URL(pageUrl).origin) && !u.startsWith('data:'),
    );
    assert.deepEqual(outside, [], 'no request leaves the two local origins');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${ARTIFACTS}/token-gate-page-390.png`, fullPage: true });
    await page.close();
  });
});
