import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST } from '../../src/console/console.routes.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** The budget of the issue: the JS of the first load, gzip-compressed. */
const INITIAL_JS_BUDGET = 250 * 1024;

/** The scripts and module preloads index.html makes the browser fetch before the app runs. */
function initialScripts(html: string): string[] {
  const srcs = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  const preloads = [...html.matchAll(/<link\b[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  return [...srcs, ...preloads];
}

describe('the console is served under /console', () => {
  let t: TestApp;
  before(async () => {
    // A no-op when the bundle is up to date (npm install builds it); builds it when sources changed.
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    t = await buildTestApp();
  });
  after(() => t?.close());

  for (const path of ['/console/', '/console/callback', '/console/orgs/acme/brands/shop/apps/new']) {
    it(`${path} answers index.html with a strict CSP and no caching`, async () => {
      const res = await t.app.inject({ url: path });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.match(csp, /connect-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/(?!gatehouse\.test)/);
      assert.match(res.body, /<div id="app">/);
    });
  }

  it('index.html has no inline script: every script has a src under /console/assets', async () => {
    const html = (await t.app.inject({ url: '/console/' })).body;
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length > 0);
    for (const [, attrs, body] of scripts) {
      assert.match(attrs, /src="\/console\/assets\/[^"]+\.js"/);
      assert.equal(body.trim(), '');
    }
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
  });

  it('/console redirects to /console/', async () => {
    const res = await t.app.inject({ url: '/console' });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/console/');
  });

  it('hashed assets are cached for a year as immutable; a missing one is 404', async () => {
    const html = (await t.app.inject({ url: '/console/' })).body;
    const [script] = initialScripts(html);
    const res = await t.app.inject({ url: script });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.match(String(res.headers['cache-control']), /max-age=31536000/);
    assert.match(String(res.headers['cache-control']), /immutable/);
    assert.equal((await t.app.inject({ url: '/console/assets/nope-12345678.js' })).statusCode, 404);
  });

  it(`the initial load is under ${INITIAL_JS_BUDGET / 1024} KB of gzip-compressed JS`, async () => {
    const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
    const scripts = initialScripts(html);
    assert.ok(scripts.length > 0);
    let total = 0;
    for (const src of scripts) {
      const file = join(CONSOLE_DIST, src.replace(/^\/console\//, ''));
      total += gzipSync(readFileSync(file), { level: 9 }).length;
    }
    console.log(`console initial JS: ${(total / 1024).toFixed(1)} KB gzip in ${scripts.length} file(s)`);
    assert.ok(total < INITIAL_JS_BUDGET, `${total} bytes`);
  });
});
