import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const FRAME = { 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'same-origin' };
const preview = (query: Record<string, string>, headers: Record<string, string> = FRAME) =>
  t.app.inject({ method: 'GET', url: `/console/brand-preview?${new URLSearchParams(query)}`, headers });

describe('GET /console/brand-preview', () => {
  it("renders the hosted sign-in page with the form's values, framed by our origin only", async () => {
    const res = await preview({
      name: 'Acme Shop',
      primaryColor: '#aa3300',
      privacyPolicyUrl: 'https://acme.example/privacy',
      providerOrder: 'google,solana',
    });
    assert.equal(res.statusCode, 200);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /frame-ancestors 'self'/);
    assert.doesNotMatch(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(res.body, /id="brand-name" class="brand-name">Acme Shop</);
    assert.match(res.body, /--brand: #aa3300/);
    assert.match(res.body, /id="privacy-link" href="https:\/\/acme.example\/privacy"/);
    assert.ok(res.body.indexOf('id="provider-google"') < res.body.indexOf('id="provider-solana"'));
  });

  it('is refused outside a same-origin frame (no look-alike sign-in page by link)', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' },
      { 'sec-fetch-dest': 'iframe', 'sec-fetch-site': 'cross-site' },
    ]) {
      const res = await preview({ name: 'PayPal' }, headers);
      assert.equal(res.statusCode, 403);
      assert.doesNotMatch(res.body, /PayPal/);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
  });

  it('escapes the name, drops unusable values and logos from other origins', async () => {
    const res = await preview({
      name: '<script>alert(1)</script>',
      primaryColor: 'red;}b{',
      logoUrl: 'https://evil.example/logo.png',
      termsUrl: 'javascript:alert(1)',
      providerOrder: 'solana,nonsense,solana',
    });
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /<script>alert/);
    assert.doesNotMatch(res.body, /evil\.example|javascript:|red;/);
    assert.equal(res.body.match(/id="provider-solana"/g)?.length, 1);
  });

  it('shows a logo uploaded to the files origin', async () => {
    const logo = `${t.ctx.config.filesBaseUrl.replace(/\/*$/, '/')}abc/logo.png`;
    const res = await preview({ name: 'Acme', logoUrl: logo });
    assert.match(
      res.body,
      new RegExp(`id="brand-logo" src="${logo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`),
    );
  });

  it('a value over its bound is 400', async () => {
    assert.equal((await preview({ name: 'x'.repeat(81) })).statusCode, 400);
  });
});
