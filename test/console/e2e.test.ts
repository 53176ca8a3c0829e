import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_BRAND_ID } from '../../src/bootstrap.js';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { CHROMIUM, CHROMIUM_ARGS, checkScreen, injectWallet, watchPage } from './browser.js';

/**
 * The console end to end in headless Chromium, driven by role and accessible name, with a fake
 * wallet injected into the page for the hosted sign-in.
 */
describe('the console in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  let orgUrl = '';

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The browser checks token times against its own clock, so the issuer's starts at real time. A
    // test clicks faster than a person: the org read limit (60/min) is raised for it.
    t = await buildTestApp({
      env: { BASE_URL: base, RATE_LIMIT_MULTIPLIER: '10' },
      clock: new ManualClock(new Date()),
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await injectWallet(owner);
    page = await owner.newPage();
    watchPage(page, problems);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signInThroughHostedPage(p: Page) {
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(/\/signin\//);
    await p.getByRole('button', { name: 'Continue with Phantom' }).click();
    await p.waitForURL(
      (u) => u.pathname.startsWith('/console/') && !u.pathname.startsWith('/console/callback'),
    );
  }

  it('a new user is sent through the hosted sign-in with a wallet and lands on the console', async () => {
    await page.goto(`${base}/console/`);
    // The silent attempt (prompt=none) finds no session and comes back offering the sign-in.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await checkScreen(page, 'signed-out');
    await signInThroughHostedPage(page);
    await page.getByRole('heading', { name: 'Your organizations' }).waitFor();
    assert.ok(await page.getByText('You are not a member of any organization yet').isVisible());
    await checkScreen(page, 'home-empty');
  });

  it('creates an org; the slug follows the name and is checked as you type', async () => {
    await page.getByRole('link', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Create an organization' }).waitFor();
    await page.getByLabel('Name').fill('Acme Corp');
    assert.equal(await page.getByLabel('Slug').inputValue(), 'acme-corp');
    await page.getByLabel('Slug').fill('A!');
    assert.ok(await page.getByText('At least 3 characters.').isVisible());
    assert.ok(await page.getByRole('button', { name: 'Create organization' }).isDisabled());
    await page.getByLabel('Slug').fill('acme-corp');
    await checkScreen(page, 'org-create');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Acme Corp', level: 1 }).waitFor();
    orgUrl = new URL(page.url()).pathname;
    assert.equal(orgUrl, '/console/orgs/acme-corp');
    assert.equal(await page.getByRole('combobox', { name: 'Organization' }).inputValue(), 'acme-corp');
    await checkScreen(page, 'org-settings');
  });

  it('creates a brand whose preview follows the colour as it is edited', async () => {
    await page
      .getByRole('navigation', { name: 'Organization' })
      .getByRole('link', { name: 'Brands' })
      .click();
    await page.getByRole('heading', { name: 'Brands' }).waitFor();
    await page.getByText('No brands yet.').waitFor();
    await page.getByRole('link', { name: 'Create brand' }).click();
    await page.getByLabel('Name').fill('Acme Shop');
    await page.getByLabel('Slug').fill('acme-shop');
    // The preview is the hosted sign-in page itself, rendered with the unsaved values in a frame.
    const preview = page.frameLocator('iframe[title="Preview of the sign-in page of Acme Shop"]');
    await preview.locator('#brand-name', { hasText: 'Acme Shop' }).waitFor();
    const accent = () =>
      preview
        .locator('html')
        .evaluate((e) => getComputedStyle(e).getPropertyValue('--brand').trim())
        .catch(() => '');
    assert.notEqual(await accent(), '#aa3300');
    await page.getByLabel('Primary colour').fill('#aa3300');
    for (let i = 0; i < 100 && (await accent()) !== '#aa3300'; i++) await page.waitForTimeout(50);
    assert.equal(await accent(), '#aa3300');
    // The wallets of the browser are listed as on the real page.
    await preview.getByRole('button', { name: /Phantom/ }).waitFor();
    // Keyboard reordering moves Google before the wallets in the preview too.
    await page.getByRole('button', { name: 'Move google up' }).click();
    await preview.locator('[data-provider]').first().and(preview.locator('#provider-google')).waitFor();
    await page.getByLabel('Privacy policy URL').fill('https://acme.example/privacy');
    await preview.getByRole('link', { name: 'Privacy policy' }).waitFor();
    await checkScreen(page, 'brand-create');
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.getByRole('heading', { name: 'Acme Shop', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, `${orgUrl}/brands/acme-shop`);
    const brand = await t.app.inject({ url: '/interactions/none' });
    assert.ok(brand.statusCode >= 400);
    await checkScreen(page, 'brand-edit');
  });

  it('creates a web app: the secret is shown once with a copy button; rotating shows a new one', async () => {
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Apps' }).click();
    await page.getByText('No apps yet.').waitFor();
    await page.getByRole('link', { name: 'Create app' }).click();
    await page.getByRole('heading', { name: 'Create an app' }).waitFor();
    assert.ok(await page.getByRole('radio', { name: /Web app/ }).isChecked());
    assert.ok(await page.getByRole('checkbox', { name: 'Authorization code' }).isChecked());
    await page.getByLabel('Name').fill('Storefront');
    // The API's field error appears at its field.
    await page.getByLabel('Redirect URIs').fill('http://shop.acme.example/callback');
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.getByText('must be an HTTPS URL').waitFor();
    assert.equal(await page.getByLabel('Redirect URIs').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Redirect URIs').fill('https://shop.acme.example/callback');
    await checkScreen(page, 'app-create');
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.getByRole('heading', { name: 'Storefront', level: 1 }).waitFor();
    const secret = (await page.getByTestId('client-secret').textContent())!.trim();
    assert.ok(secret.length >= 32);
    assert.ok(await page.getByText('this is the only time it is shown').isVisible());
    await page.getByRole('button', { name: 'Copy secret' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await checkScreen(page, 'app-secret');
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    assert.equal(await page.getByTestId('client-secret').count(), 0);
    assert.ok(await page.getByText('/.well-known/openid-configuration').isVisible());

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the secret of Storefront?' });
    await dialog.waitFor();
    await checkScreen(page, 'app-rotate-confirm');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('client-secret').waitFor();
    const rotated = (await page.getByTestId('client-secret').textContent())!.trim();
    assert.notEqual(rotated, secret);
    await page.reload();
    await page.getByRole('heading', { name: 'Storefront', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('client-secret').count(), 0, 'a reload never shows the secret again');
    await checkScreen(page, 'app-detail');
  });

  it('adds a scope to the brand', async () => {
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Scopes' }).click();
    await page.getByText('No scopes yet.').waitFor();
    await page.getByLabel('Scope name').fill('Orders');
    assert.ok(await page.getByText('Only lower-case letters').isVisible());
    await page.getByLabel('Scope name').fill('orders:read');
    await page.getByLabel('Scope description').fill('Read your orders');
    await page.getByRole('button', { name: 'Add scope' }).click();
    await page.getByRole('rowheader', { name: 'orders:read' }).waitFor();
    await checkScreen(page, 'scopes');
  });

  it('a scope an app allows cannot be deleted: the 409 names the app', async () => {
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('link', { name: 'Storefront' }).click();
    await page.getByRole('checkbox', { name: 'orders:read' }).check();
    await page.getByRole('button', { name: 'Save app' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Scopes' }).click();
    await page.getByRole('button', { name: 'Delete scope orders:read' }).click();
    await page.getByRole('alert').filter({ hasText: 'Used by apps Storefront' }).waitFor();
    await checkScreen(page, 'scope-in-use');
  });

  it('adds a Google connection and shows its callback URL to register', async () => {
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByText('No connections').waitFor();
    await page.getByLabel('Provider').selectOption('google');
    await page.getByLabel('Client id').fill('google-client-id.apps.example');
    await page.getByLabel('Client secret').fill('google-client-secret');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByRole('rowheader', { name: 'Google' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Google' }) });
    assert.match((await row.textContent()) ?? '', new RegExp(`${base}/oauth/google/[^/]+/callback`));
    await checkScreen(page, 'connections');
  });

  it('an expired session sends the user back through the sign-in and returns them where they were', async () => {
    // Capture the tokens the console holds in memory, then end everything: revoke both at the
    // issuer and drop the hosted session cookie.
    let tokens: { access_token: string; refresh_token: string } | undefined;
    const onToken = async (r: import('playwright-core').Response) => {
      if (new URL(r.url()).pathname === '/oauth2/token' && r.ok()) tokens = await r.json();
    };
    page.on('response', onToken);
    await page.reload();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    // No request of the reloaded page may still be on its way when the tokens are revoked: its 401
    // would send the page to the sign-in before the click below (seen once on a loaded machine).
    await page.waitForLoadState('networkidle');
    page.off('response', onToken);
    assert.ok(tokens?.access_token && tokens.refresh_token);
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      const res = await fetch(`${base}/oauth2/revoke`, {
        method: 'POST',
        body: new URLSearchParams({ token, client_id: 'console' }),
      });
      assert.equal(res.status, 200);
    }
    await owner.clearCookies();
    await page.getByRole('navigation', { name: 'Brand' }).getByRole('link', { name: 'Scopes' }).click();
    await page.waitForURL(/\/signin\//);
    await page.getByRole('button', { name: 'Continue with Phantom' }).click();
    await page.waitForURL((u) => u.pathname === `${orgUrl}/brands/acme-shop/scopes`);
    await page.getByRole('rowheader', { name: 'orders:read' }).waitFor();
  });

  it('invites a member by link; the invitee accepts in another browser and sees edit actions disabled', async () => {
    await page.goto(`${base}${orgUrl}/members`);
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    await page.getByText('No pending invitations.').waitFor();
    await checkScreen(page, 'members');
    await page
      .getByRole('group', { name: 'Roles of the new member' })
      .getByRole('checkbox', { name: 'Member' })
      .check();
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const url = (await page.getByTestId('invitation-url').textContent())!.trim();
    assert.match(url, new RegExp(`^${base}/console/invitations/accept#token=ghinv_`));
    await page.getByRole('button', { name: /^Revoke the invitation for Member/ }).waitFor();
    assert.equal(await page.getByText('No pending invitations.').count(), 0);
    await checkScreen(page, 'members-invited');

    const invitee = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await injectWallet(invitee);
    const other = await invitee.newPage();
    watchPage(other, problems);
    await other.goto(url);
    await signInThroughHostedPage(other);
    await other.getByRole('heading', { name: 'Join an organization' }).waitFor();
    await checkScreen(other, 'invitation-accept');
    await other.getByRole('button', { name: 'Accept invitation' }).click();
    await other.getByRole('heading', { name: 'Acme Corp', level: 1 }).waitFor();
    const save = other.getByRole('button', { name: 'Save settings' });
    assert.ok(await save.isDisabled());
    assert.equal(
      await save.getAttribute('aria-describedby').then((id) => other.locator(`[id="${id}"]`).textContent()),
      'Needs the permission org.edit.',
    );
    assert.ok(await other.getByRole('button', { name: 'Delete organization' }).isDisabled());
    await checkScreen(other, 'member-org-settings');
    await other.goto(`${base}${orgUrl}/brands/acme-shop`);
    await other.getByRole('heading', { name: 'Acme Shop', level: 1 }).waitFor();
    assert.ok(await other.getByRole('button', { name: 'Save brand' }).isDisabled());
    assert.ok(await other.getByLabel('Name').isDisabled());
    await other.goto(`${base}${orgUrl}/brands/acme-shop/apps`);
    await other.getByRole('link', { name: 'Storefront' }).waitFor();
    assert.ok(await other.getByRole('button', { name: 'Create app' }).isDisabled());
    await checkScreen(other, 'member-apps');
    await invitee.close();

    await page.reload();
    await page.getByText('No pending invitations.').waitFor();
    const others = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader') })
      .filter({ hasNotText: '(you)' });
    assert.equal(await others.count(), 1, 'the invitee is a member now');
    assert.match((await others.textContent()) ?? '', /Member/);
  });

  it('shows roles: built-in ones read-only, a custom role built from permission checkboxes grouped by resource', async () => {
    await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('heading', { name: 'Roles' }).waitFor();
    await page.getByText('Owner (built-in, read-only)').click();
    const ownerBoxes = page.locator('details[open] input[type=checkbox]');
    assert.ok((await ownerBoxes.count()) >= 10);
    assert.ok(await ownerBoxes.first().isDisabled());
    await page.getByLabel('Role name').last().fill('Support');
    const create = page.locator('form').last();
    await create
      .getByRole('group', { name: 'members' })
      .getByRole('checkbox', { name: 'org.members.view' })
      .check();
    await create.getByRole('button', { name: 'Create role' }).click();
    await page.getByText('Support', { exact: true }).waitFor();
    await checkScreen(page, 'roles');
  });

  it('a reload keeps the user signed in, on the same screen', async () => {
    await page.goto(`${base}${orgUrl}/brands/acme-shop/connections`);
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    const here = page.url();
    await page.reload();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    assert.equal(page.url(), here);
  });

  it('signs out (the hosted session ends at /oauth2/logout, back to the console); a reload does not sign in again', async () => {
    const consoleSessions = () =>
      t.ctx.db.selectFrom('sessions').select('id').where('brand_id', '=', CONSOLE_BRAND_ID).execute();
    const before = (await consoleSessions()).length;
    const logout = page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth2/logout');
    await page.getByRole('button', { name: 'Sign out' }).click();
    const res = await logout;
    assert.equal(res.status(), 302);
    assert.equal(res.headers().location, `${base}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal((await consoleSessions()).length, before - 1, "this browser's hosted session ended");
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
  });

  it('no CSP violation or page error happened on any screen', () => {
    assert.deepEqual(problems, []);
  });
});
