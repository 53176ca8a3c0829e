import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, createUser, grantSystem, type TestApp } from '../helpers/app.js';
import { addMember } from '../helpers/fixtures.js';
import { freePort } from '../helpers/net.js';
import { seedClient } from '../helpers/signin.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';
import { refresh, signInToApp } from '../users/flow.js';
import { CHROMIUM, CHROMIUM_ARGS, checkScreen, injectWallet, watchPage } from './browser.js';

const LOGO = new URL('../pages/logo.png', import.meta.url).pathname;
const short = (a: string) => `${a.slice(0, 4)}…${a.slice(-4)}`;

/**
 * A second wallet in the page, announced the Wallet Standard way (`wallet-standard:register-wallet`)
 * with `standard:connect` and `solana:signMessage`; its key stays in the test process.
 */
async function injectStandardWallet(context: BrowserContext): Promise<TestWallet> {
  const wallet = createTestWallet();
  await context.exposeFunction('__gatehouseTestSignStandard', (b64: string) =>
    wallet.signBytes(Buffer.from(b64, 'base64')).toString('base64'),
  );
  await context.addInitScript(`(() => {
    const account = { address: ${JSON.stringify(wallet.address)}, publicKey: new Uint8Array(32), chains: ['solana:mainnet'], features: ['solana:signMessage'] };
    const wallet = {
      version: '1.0.0',
      name: 'Test Standard Wallet',
      icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
      chains: ['solana:mainnet'],
      accounts: [],
      features: {
        'standard:connect': { version: '1.0.0', connect: async () => { wallet.accounts = [account]; return { accounts: [account] }; } },
        'solana:signMessage': { version: '1.0.0', signMessage: async ({ message }) => {
          let s = '';
          for (const b of message) s += String.fromCharCode(b);
          const sig = atob(await window.__gatehouseTestSignStandard(btoa(s)));
          return [{ signedMessage: message, signature: Uint8Array.from(sig, (c) => c.charCodeAt(0)) }];
        } },
      },
    };
    const callback = ({ register }) => register(wallet);
    window.addEventListener('wallet-standard:app-ready', (e) => callback(e.detail));
    window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
  })();`);
  return wallet;
}

/**
 * The account screens, the operator's views and the org leftovers of part 1, end to end in Chromium
 * by role and accessible name.
 */
describe('the console: account, operator views, org lifecycle', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let phantom: TestWallet;
  let standard: TestWallet;
  let userId = '';
  const problems: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await buildTestApp({
      env: { BASE_URL: base, RATE_LIMIT_MULTIPLIER: '10' },
      clock: new ManualClock(new Date()),
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    phantom = await injectWallet(context);
    standard = await injectStandardWallet(context);
    page = await context.newPage();
    watchPage(page, problems);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const accountTab = (name: string) =>
    page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name }).click();

  it('signs in with a wallet and edits the profile: username checked as typed, picture uploaded', async () => {
    await createUser(t, { username: 'taken-name' });
    await page.goto(`${base}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Continue with Phantom' }).click();
    await page.getByRole('heading', { name: 'Your organizations' }).waitFor();
    const row = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', phantom.address)
      .executeTakeFirstOrThrow();
    userId = row.user_id;
    assert.equal(
      await page.getByRole('link', { name: 'Operator' }).count(),
      0,
      'no operator link without permissions',
    );

    await page.getByRole('link', { name: /^Account: / }).click();
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Username').fill('taken-name');
    await page.getByText('taken-name is taken.').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Save profile' }).isDisabled());
    await page.getByLabel('Username').fill('ada-l');
    await page.getByText('ada-l is available.').waitFor();
    await page.getByLabel('Language').selectOption('fr');
    await page.getByLabel(/Profile picture/).setInputFiles(LOGO);
    await page.getByRole('status').filter({ hasText: 'Uploaded logo.png' }).waitFor();
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('img', { name: 'You' }).waitFor();
    const user = await t.ctx.db
      .selectFrom('users')
      .select(['username', 'first_name', 'preferred_language', 'profile_picture_id'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    assert.equal(user.username, 'ada-l');
    assert.equal(user.first_name, 'Ada');
    assert.equal(user.preferred_language, 'fr');
    assert.ok(user.profile_picture_id);
    await page.getByRole('cell', { name: 'Signed in' }).first().waitFor();
    await checkScreen(page, 'account-profile');
  });

  it("revokes an app's consent grant: the app's refresh token stops working", async () => {
    const app = await seedClient(t, { confidential: true });
    const session = await signInToApp(t, app, phantom);
    assert.equal(session.userId, userId);
    assert.equal((await refresh(t, app, session.refreshToken)).statusCode, 200);
    const again = await signInToApp(t, app, phantom);
    await accountTab('Connected apps');
    await page.getByRole('rowheader', { name: app.clientId }).waitFor();
    await checkScreen(page, 'account-apps');
    await page.getByRole('button', { name: `Revoke access of ${app.clientId}` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke access of ${app.clientId}?` });
    await dialog.getByRole('button', { name: 'Revoke access' }).click();
    await page.getByText('You have not allowed any app yet.').waitFor();
    const refused = await refresh(t, app, again.refreshToken);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error, 'invalid_grant');
  });

  it("lists the account's sessions on every brand and ends another browser's session", async () => {
    const app = await seedClient(t, { confidential: true });
    const elsewhere = await signInToApp(t, app, phantom);
    assert.equal(elsewhere.userId, userId);
    await accountTab('Sessions');
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    const mine = page.getByRole('rowheader', { name: /This browser/ });
    await mine.waitFor();
    await page.getByRole('rowheader', { name: app.brandSlug }).waitFor();
    await checkScreen(page, 'account-sessions');
    await page.getByRole('button', { name: new RegExp(`^End session on ${app.brandSlug} `) }).click();
    const dialog = page.getByRole('dialog', { name: new RegExp(`^End session on ${app.brandSlug} `) });
    await dialog.getByRole('button', { name: 'End session' }).click();
    await page.getByRole('rowheader', { name: app.brandSlug }).waitFor({ state: 'detached' });
    assert.equal(await mine.count(), 1, 'this browser stays signed in');
    const refused = await refresh(t, app, elsewhere.refreshToken);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error, 'invalid_grant');
  });

  it('creates an API key shown once, which works until it is revoked (then 401)', async () => {
    await accountTab('API keys');
    await page.getByText('No active API keys.').waitFor();
    await page.getByLabel('Key name').fill('CI deploys');
    await page.getByRole('checkbox', { name: /^users:read/ }).check();
    await page.getByLabel('IP allowlist (optional)').fill('127.0.0.1/32');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('api-key').textContent())!.trim();
    assert.ok(await page.getByText('this is the only time it is shown').isVisible());
    await checkScreen(page, 'account-api-key-created');
    const me = () => fetch(`${base}/users/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await me()).status, 200);
    await page.getByRole('button', { name: 'I have saved the key' }).click();
    assert.equal(await page.getByTestId('api-key').count(), 0);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'CI deploys' }) });
    assert.match((await row.textContent()) ?? '', /users:read.*127\.0\.0\.1\/32/);
    await page.getByRole('button', { name: 'Revoke the key CI deploys' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke the key CI deploys?' })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await page.getByText('No active API keys.').waitFor();
    assert.equal((await me()).status, 401);
    await checkScreen(page, 'account-api-keys');
  });

  it('links a second wallet, makes it primary and removes the first with a fresh signature', async () => {
    await accountTab('Wallets and sign-in');
    await page.getByRole('heading', { name: 'Wallets and sign-in' }).waitFor();
    await page.getByRole('rowheader', { name: new RegExp(short(phantom.address)) }).waitFor();
    // The second wallet belongs to another account: linking it is a 409 explained in place, and
    // moving it (`force`) is one more click.
    const previous = await createUser(t);
    const challenge = await t.app.inject({
      method: 'POST',
      url: '/users/me/wallet-challenge',
      headers: previous.auth,
      payload: { address: standard.address },
    });
    const linked = await t.app.inject({
      method: 'POST',
      url: '/users/me/public-keys',
      headers: previous.auth,
      payload: { blockchain: 'solana', ...standard.prove(challenge.json().message) },
    });
    assert.equal(linked.statusCode, 201, linked.body);
    await page.getByLabel('Label (optional)').fill('Cold storage');
    await page.getByRole('button', { name: 'Link with Test Standard Wallet' }).click();
    const inUse = page.getByRole('alert').filter({ hasText: 'This wallet is linked to another account.' });
    await inUse.waitFor();
    await checkScreen(page, 'account-wallet-in-use');
    await inUse.getByRole('button', { name: 'Move the wallet to this account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Linked ${short(standard.address)}` })
      .waitFor();
    const left = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('id')
      .where('user_id', '=', previous.id)
      .execute();
    assert.deepEqual(left, [], 'the wallet moved from the other account');
    assert.equal(
      await page.getByLabel(`Label of ${short(standard.address)}`, { exact: true }).inputValue(),
      'Cold storage',
    );
    await checkScreen(page, 'account-wallets');

    await page.getByRole('button', { name: `Make primary: ${short(standard.address)}` }).click();
    await page.getByRole('rowheader', { name: new RegExp(`${short(standard.address)}.*Primary`) }).waitFor();

    await page.getByRole('button', { name: `Remove ${short(phantom.address)}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove the wallet ${short(phantom.address)}?` });
    await dialog.waitFor();
    await checkScreen(page, 'account-wallet-remove');
    // The wrong wallet is refused in the page before anything is sent.
    await dialog.getByRole('button', { name: 'Sign with Test Standard Wallet and remove' }).click();
    await dialog
      .getByRole('alert')
      .filter({ hasText: `Switch it to ${short(phantom.address)}` })
      .waitFor();
    await dialog.getByRole('button', { name: 'Sign with Phantom and remove' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page
      .getByRole('rowheader', { name: new RegExp(short(phantom.address)) })
      .waitFor({ state: 'detached' });
    const keys = await t.ctx.db
      .selectFrom('user_public_keys')
      .select(['address', 'is_primary', 'label'])
      .where('user_id', '=', userId)
      .execute();
    assert.deepEqual(keys, [{ address: standard.address, is_primary: true, label: 'Cold storage' }]);
  });

  it('creates an org with the slug checked against the API; uploads its icon with progress', async () => {
    await page.goto(`${base}/console/orgs/new`);
    await page.getByLabel('Name').fill('System');
    await page.getByText('system is taken.').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Create organization' }).isDisabled());
    await page.getByLabel('Name').fill('Acme Labs');
    await page.getByText('acme-labs is available.').waitFor();
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Acme Labs', level: 1 }).waitFor();
    await page.getByLabel(/^Icon/).setInputFiles(LOGO);
    await page.getByRole('status').filter({ hasText: 'Uploaded logo.png' }).waitFor();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.ok(await page.getByRole('img', { name: 'Current icon' }).isVisible());
  });

  it("uploads a brand's logo with progress; the preview shows it on the real sign-in page", async () => {
    await page.goto(`${base}/console/orgs/acme-labs/brands/new`);
    await page.getByLabel('Name').fill('Acme Labs Store');
    await page.getByLabel('Slug').fill('acme-labs-store');
    await page.getByLabel(/^Logo/).setInputFiles(LOGO);
    await page.getByRole('status').filter({ hasText: 'Uploaded logo.png' }).waitFor();
    const preview = page.frameLocator('iframe[title="Preview of the sign-in page of Acme Labs Store"]');
    await preview.getByRole('img', { name: /Acme Labs Store/ }).waitFor();
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.getByRole('heading', { name: 'Acme Labs Store', level: 1 }).waitFor();
    const brand = await t.ctx.db
      .selectFrom('brands')
      .select('logo_file_id')
      .where('slug', '=', 'acme-labs-store')
      .executeTakeFirstOrThrow();
    assert.ok(brand.logo_file_id);
  });

  it("edits a custom role's permissions", async () => {
    await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('heading', { name: 'Roles' }).waitFor();
    const create = page.locator('form').last();
    await create.getByLabel('Role name').fill('Auditor');
    await create
      .getByRole('group', { name: 'members' })
      .getByRole('checkbox', { name: 'org.members.view' })
      .check();
    await create.getByRole('button', { name: 'Create role' }).click();
    await page.getByText('Auditor', { exact: true }).click();
    const editor = page.locator('details[open] form');
    await editor.getByRole('checkbox', { name: 'org.webhooks.view' }).check();
    await editor.getByRole('checkbox', { name: 'org.members.view' }).uncheck();
    await editor.getByRole('button', { name: 'Save role Auditor' }).click();
    const deadline = Date.now() + 10_000;
    let perms: string[] = [];
    while (Date.now() < deadline) {
      const role = await t.ctx.db
        .selectFrom('roles')
        .select('permissions')
        .where('name', '=', 'Auditor')
        .executeTakeFirst();
      perms = [...((role?.permissions as string[]) ?? [])].sort();
      if (perms.includes('org.webhooks.view')) break;
      await page.waitForTimeout(100);
    }
    assert.deepEqual(perms, ['org.read', 'org.webhooks.view']);
    await checkScreen(page, 'roles-edited');
  });

  it('transfers ownership to a member, naming the org to confirm', async () => {
    const heir = await createUser(t, { username: 'heir' });
    const org = await t.ctx.db
      .selectFrom('orgs')
      .select('id')
      .where('slug', '=', 'acme-labs')
      .executeTakeFirstOrThrow();
    const roles = await t.ctx.db
      .selectFrom('roles')
      .select(['id', 'built_in'])
      .where('org_id', '=', org.id)
      .execute();
    const byKind = Object.fromEntries(roles.filter((r) => r.built_in).map((r) => [r.built_in, r.id]));
    await addMember(t, { id: org.id, slug: 'acme-labs', roles: byKind as never }, heir, 'member');
    await page.goto(`${base}/console/orgs/acme-labs`);
    await page.getByLabel('New owner').selectOption({ label: 'heir' });
    await page.getByRole('button', { name: 'Transfer ownership' }).click();
    const dialog = page.getByRole('dialog', { name: 'Transfer ownership of Acme Labs?' });
    assert.ok(await dialog.getByRole('button', { name: 'Transfer ownership' }).isDisabled());
    await dialog.getByLabel('Type acme-labs to confirm').fill('acme-labs');
    await checkScreen(page, 'org-transfer-confirm');
    await dialog.getByRole('button', { name: 'Transfer ownership' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // The former owner keeps the Admin role: deleting is the new owner's now.
    await page.getByText('Needs the permission org.delete.').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Delete organization' }).isDisabled());
  });

  it('deletes an org; its slug then shows as reserved', async () => {
    await page.goto(`${base}/console/orgs/new`);
    await page.getByLabel('Name').fill('Doomed Co');
    await page.getByText('doomed-co is available.').waitFor();
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Doomed Co', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete organization' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Doomed Co?' });
    await dialog.getByLabel('Type doomed-co to confirm').fill('doomed-co');
    await checkScreen(page, 'org-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete organization' }).click();
    await page.getByRole('heading', { name: 'Your organizations' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Doomed Co' }).count(), 0);
    await page.getByRole('link', { name: 'Create organization' }).click();
    await page.getByLabel('Name').fill('Doomed Co');
    await page.getByText('stays reserved for 90 days').waitFor();
  });

  it('shows the operator views to holders of system permissions: all orgs, user lookup', async () => {
    await grantSystem(t, userId, ['admin.orgs.view', 'admin.users.view']);
    await page.goto(`${base}/console/`);
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { name: 'All organizations' }).waitFor();
    await page.getByRole('rowheader', { name: 'Acme Labs' }).waitFor();
    await checkScreen(page, 'operator-orgs');
    await page
      .getByRole('navigation', { name: 'Operator' })
      .getByRole('link', { name: 'Find users' })
      .click();
    await page.getByLabel('User id, username or wallet address').fill('heir');
    await page.getByRole('button', { name: 'Find user' }).click();
    await page.getByRole('article', { name: 'User heir' }).waitFor();
    await page.getByLabel('User id, username or wallet address').fill(standard.address);
    await page.getByRole('button', { name: 'Find user' }).click();
    await page.getByRole('article', { name: 'User ada-l' }).waitFor();
    await page.getByLabel('Wallet addresses').fill(`${standard.address}\n${phantom.address}`);
    await page.getByRole('button', { name: 'Find wallets' }).click();
    const free = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: phantom.address }) });
    assert.match((await free.textContent()) ?? '', /no user/);
    await checkScreen(page, 'operator-users');
  });

  it('deletes the account and explains the 30-day grace window', async () => {
    await page.goto(`${base}/console/account/delete`);
    await page.getByRole('heading', { name: 'Delete your account' }).waitFor();
    await checkScreen(page, 'account-delete');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
    await dialog.getByLabel('Type ada-l to confirm').fill('ada-l');
    await dialog.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByRole('heading', { name: 'Your account is scheduled for deletion' }).waitFor();
    assert.ok(await page.getByText('After a 30-day grace window').isVisible());
    const user = await t.ctx.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', userId)
      .executeTakeFirst();
    assert.ok(user?.deleted_at);
    await checkScreen(page, 'account-deleted');
    await page.reload();
    await page.getByRole('heading', { name: 'Your account is scheduled for deletion' }).waitFor();
  });

  it('no CSP violation or page error happened on any screen', () => {
    assert.deepEqual(problems, []);
  });
});
