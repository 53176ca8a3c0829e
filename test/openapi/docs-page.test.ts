import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';
import { freePort } from '../helpers/net.js';

const ARTIFACTS = 'test-artifacts';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe-core findings on the page, as "rule: target" lines. */
async function axeFindings(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (rightly) refuses an injected script tag.
  await page.evaluate(AXE);
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<any> } }).axe;
    return (await axe.run()).violations as { id: string; impact: string; nodes: { target: string[] }[] }[];
  });
  return results
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('the API reference and console pages, in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await buildTestApp({ env: { BASE_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A page that records every request and every CSP report; outside requests are refused. */
  async function open(width: number) {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    const outside: string[] = [];
    const problems: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(base) || url.startsWith('data:')) return route.continue();
      outside.push(url);
      return route.abort();
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    return { page, outside, problems };
  }

  for (const width of [1280, 390]) {
    it(`/docs renders every operation from /openapi.json at ${width} px with nothing from outside`, async () => {
      const { page, outside, problems } = await open(width);
      const res = await page.goto(`${base}/docs`);
      assert.equal(res?.status(), 200);
      const csp = res?.headers()['content-security-policy'] ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https:/);

      await page.getByRole('heading', { name: /Gatehouse API/ }).waitFor();
      const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body);
      const count = Object.values(doc.paths).reduce(
        (n: number, ops) => n + Object.keys(ops as object).length,
        0,
      );
      // Swagger UI mounts the operations near the viewport only: collect them while scrolling down.
      const seen = new Set<string>();
      for (let i = 0; i < 400; i++) {
        const ids = await page.$$eval('.opblock', (els) => els.map((e) => e.id));
        for (const id of ids) seen.add(id);
        const atEnd = await page.evaluate(
          () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 2,
        );
        if (atEnd) break;
        await page.mouse.wheel(0, 600);
        await page.waitForTimeout(20);
      }
      const expected = new Set<string>();
      for (const ops of Object.values(doc.paths) as Record<string, { operationId: string; tags: string[] }>[])
        for (const o of Object.values(ops))
          expected.add(`operations-${o.tags[0].replace(/\s/g, '_')}-${o.operationId}`);
      assert.equal(seen.size, count);
      assert.deepEqual([...seen].sort(), [...expected].sort(), 'every operation is on the page');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: `${ARTIFACTS}/docs-${width}.png` });

      // A deep link opens one operation: its summary and the rules its description carries.
      await page.goto('about:blank');
      await page.goto(`${base}/docs#/Apps/createApp`);
      const block = page.locator('#operations-Apps-createApp');
      await block.waitFor();
      assert.match((await block.textContent()) ?? '', /Create an app \(OAuth client\) in a brand/);
      await block.getByText('org.apps.edit').first().waitFor();
      await block.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ARTIFACTS}/docs-operation-${width}.png` });

      assert.deepEqual(outside, [], 'no request leaves the origin');
      assert.deepEqual(problems, [], 'no script error and no CSP refusal');
      await page.close();
    });
  }

  // The console's screens are tested in test/console/; here, its first page under the same rules.
  it('/console answers the console app: no outside request, no CSP refusal, no serious axe finding', async () => {
    const { page, outside, problems } = await open(1280);
    await page.goto(`${base}/console`);
    // No hosted session: the silent sign-in comes back and the console offers the sign-in.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.deepEqual(await axeFindings(page), []);
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
