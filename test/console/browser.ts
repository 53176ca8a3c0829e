import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';

export { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A Phantom-style injected wallet (`window.phantom.solana`: `connect()`, `signMessage()`), whose key
 * stays in the test process: the page asks the test to sign through an exposed function.
 */
export async function injectWallet(context: BrowserContext): Promise<TestWallet> {
  const wallet = createTestWallet();
  await context.exposeFunction('__gatehouseTestSign', (b64: string) =>
    wallet.signBytes(Buffer.from(b64, 'base64')).toString('base64'),
  );
  // A string, not a function: the test runner's transform would add helpers the page does not have.
  await context.addInitScript(`(() => {
    const address = ${JSON.stringify(wallet.address)};
    const publicKey = { toBase58: () => address, toString: () => address };
    let connected = false;
    window.phantom = {
      solana: {
        isPhantom: true,
        get publicKey() { return connected ? publicKey : null; },
        connect: async () => { connected = true; return { publicKey }; },
        signMessage: async (message) => {
          let s = '';
          for (const b of message) s += String.fromCharCode(b);
          const sig = atob(await window.__gatehouseTestSign(btoa(s)));
          return { signature: Uint8Array.from(sig, (c) => c.charCodeAt(0)), publicKey };
        },
      },
    };
  })();`);
  return wallet;
}

/** Fails the test on any Content-Security-Policy violation or uncaught page error. */
export function watchPage(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
}

/**
 * An axe-core scan of the screen in the dark and light schemes (no serious or critical violation),
 * no sideways scrolling at 390 px, and screenshots at 1280 and 390 px into test-artifacts/console/.
 */
export async function checkScreen(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  // Both colour schemes (prefers-color-scheme): each must pass the contrast rules.
  for (const scheme of ['dark', 'light'] as const) {
    // Reduced motion: the styling system's colour transitions would otherwise be scanned half-way.
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await scan(page, `${name} (${scheme})`);
    if (scheme === 'dark') {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, `${name}-dark-1280.png`), fullPage: true });
    }
  }
  await shoot(page, name);
}

async function scan(page: Page, name: string): Promise<void> {
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: any[] }> } }).axe;
    const r = await axe.run({ resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n: any) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`).join(', ')}`,
      );
  });
  assert.deepEqual(violations, [], `axe on ${name}`);
}

async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const wide =
      overflow > 1
        ? await page.evaluate(() =>
            Array.from(document.querySelectorAll('body *'))
              .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
              .filter((e) => !e.closest('.table-wrap'))
              .slice(0, 8)
              .map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
          )
        : [];
    assert.ok(overflow <= 1, `${name} at ${width}px scrolls sideways by ${overflow}px: ${wide.join(' ')}`);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
}
