import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page, chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';
import { createUser } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { type ProviderWorld, providerWorld } from './setup.js';

const ARTIFACTS = 'test-artifacts/link-confirm';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Linking a provider from the console in a real browser: the console's same-origin call sets the
 * flow cookie, the provider returns to a confirmation page that only that browser can answer.
 */
describe('provider link confirmation page, in headless Chromium', () => {
  let w: ProviderWorld;
  let browser: Browser;
  let base: string;
  let userId: string;
  let token: string;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    w = await providerWorld({ BASE_URL: base });
    await w.t.app.listen({ port, host: '127.0.0.1' });
    const user = await createUser(w.t, { username: 'ada' });
    userId = user.id;
    token = user.token;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await w?.close();
  });

  /** What the console does: a same-origin POST with the console token, from a page of ours. */
  async function startLinkIn(page: Page, type: string): Promise<string> {
    await page.goto(`${base}/device`);
    return page.evaluate(
      async ({ type, token }) => {
        const res = await fetch(`/users/me/authentication-providers/${type}/link`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        return (await res.json()).authorizationUrl as string;
      },
      { type, token },
    );
  }

  async function axeViolations(page: Page) {
    await page.addScriptTag({ content: AXE });
    const result = await page.evaluate(async () => {
      const r = await (window as any).axe.run(document);
      return r.violations.map((v: { id: string; impact: string }) => ({ id: v.id, impact: v.impact }));
    });
    return (result as Array<{ id: string; impact: string }>).filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
  }

  const discordLinks = () =>
    w.t.ctx.db
      .selectFrom('oauth_links')
      .select('external_user_id')
      .where('user_id', '=', userId)
      .where('provider', '=', 'discord')
      .execute();

  it('the starting browser confirms "Link Discord account X to Gatehouse account Y?"; another browser is refused', async () => {
    w.mock.realms.get('discord')!.profile = { id: 'discord-ada', username: 'ada#0001' };
    // bypassCSP only so the axe-core scan can be injected; the page's own CSP is asserted elsewhere.
    const mine = await browser.newContext({ bypassCSP: true });
    const page = await mine.newPage();
    const url = await startLinkIn(page, 'discord');

    // The link URL sent to someone else: their browser is refused and nothing is linked.
    const theirs = await browser.newContext();
    const victim = await theirs.newPage();
    await victim.goto(url);
    await victim.waitForURL(/\/oauth\/discord\//);
    assert.match((await victim.textContent('body')) ?? '', /started in another browser/);
    assert.deepEqual(await discordLinks(), []);
    await theirs.close();

    // The mock provider returns to the callback: the confirmation page, nothing linked yet.
    await page.goto(url);
    const question = page.getByRole('heading', { level: 1 });
    await question.waitFor();
    assert.equal(
      (await question.textContent())?.trim(),
      'Link Discord account ada#0001 to Gatehouse account ada?',
    );
    assert.deepEqual(await discordLinks(), []);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.screenshot({ path: `${ARTIFACTS}/confirm-${width}.png`, fullPage: true });
    }
    assert.deepEqual(await axeViolations(page), []);

    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Discord account linked' }).waitFor();
    assert.deepEqual(await discordLinks(), [{ external_user_id: 'discord-ada' }]);
    await page.screenshot({ path: `${ARTIFACTS}/linked-390.png`, fullPage: true });
    await mine.close();
  });

  it('Cancel links nothing', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const url = await startLinkIn(page, 'facebook');
    await page.goto(url);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Facebook account not linked' }).waitFor();
    const links = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('id')
      .where('user_id', '=', userId)
      .where('provider', '=', 'facebook')
      .execute();
    assert.deepEqual(links, []);
    await ctx.close();
  });
});
