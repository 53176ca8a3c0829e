import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { ManualClock } from '../../src/lib/clock.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { FakeSolanaRpc } from '../token-gates/fake-rpc.js';
import { fireEvent, Receiver, selfSignedCert } from '../webhooks/receiver.js';
import { CHROMIUM, CHROMIUM_ARGS, checkScreen, injectWallet, watchPage } from './browser.js';

/**
 * The console's token gates, webhooks and audit log in headless Chromium, by role and accessible
 * name: a gate checked against a fake Solana RPC, a webhook delivering to a local HTTPS receiver
 * until it is disabled and re-enabled from the console, the audit log filtered and exported.
 */
describe('the console: token gates, webhooks, audit log', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let rpc: FakeSolanaRpc;
  let receiver: Receiver;
  const problems: string[] = [];
  const orgSlug = 'ops-co';
  let orgUrl = '';
  let mint = '';
  let secret = '';

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is required for this test`);
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    rpc = await new FakeSolanaRpc().start();
    receiver = await Receiver.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The browser checks token times against its own clock, so the issuer's starts at real time.
    t = await buildTestApp({
      env: {
        BASE_URL: base,
        RATE_LIMIT_MULTIPLIER: '10',
        SOLANA_RPC_URL: rpc.url,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      clock: new ManualClock(new Date()),
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    // The test drives the delivery worker (runOnce) and trusts the receiver's self-signed certificate.
    const worker = webhookWorker(t.ctx);
    await worker.stop();
    worker.configureClient({ ca: selfSignedCert().cert });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await injectWallet(context);
    page = await context.newPage();
    watchPage(page, problems);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
    await rpc?.stop();
  });

  const orgNav = (name: string) =>
    page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name }).click();

  it('signs in and creates an org', async () => {
    await page.goto(`${base}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/signin\//);
    await page.getByRole('button', { name: 'Continue with Phantom' }).click();
    await page.getByRole('heading', { name: 'Your organizations' }).waitFor();
    await page.getByRole('link', { name: 'Create organization' }).click();
    await page.getByLabel('Name').fill('Ops Co');
    await page.getByLabel('Slug').fill(orgSlug);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Ops Co', level: 1 }).waitFor();
    orgUrl = new URL(page.url()).pathname;
  });

  it('creates a token gate: the mint is checked as base58 and its decimals come from the chain', async () => {
    await orgNav('Token gates');
    await page.getByText('No token gates yet.').waitFor();
    await checkScreen(page, 'gates-empty');
    mint = rpc.addMint('spl-token', 6);
    await page.getByLabel('Name').fill('Holders');
    await page.getByLabel('Mint address').fill('0OIl');
    await page.getByText('Only base58 characters').waitFor();
    assert.equal(await page.getByLabel('Mint address').getAttribute('aria-invalid'), 'true');
    assert.ok(await page.getByRole('button', { name: 'Create gate' }).isDisabled());
    await page.getByLabel('Mint address').fill(mint);
    await page.getByText('A SPL Token mint with 6 decimals.').waitFor();
    // Raw units and tokens follow each other once the decimals are known.
    const raw = page.getByLabel(/^Minimum holdings(?! in tokens)/);
    const tokens = page.getByLabel(/^Minimum holdings in tokens/);
    await raw.fill('1000');
    assert.equal(await tokens.inputValue(), '0.001');
    await tokens.fill('1.1234567');
    await page.getByText('A number with at most 6 decimals.').waitFor();
    await tokens.fill('1.5');
    assert.equal(await raw.inputValue(), '1500000');
    await page.getByText('1500000 = 1.5 tokens (this mint has 6 decimals)').waitFor();
    await checkScreen(page, 'gate-create');
    await page.getByRole('button', { name: 'Create gate' }).click();
    await page.getByRole('heading', { name: 'Holders', level: 1 }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`^${orgUrl}/token-gates/`));
  });

  it('checks a wallet against the gate: fresh, then cached, then refreshed from the chain', async () => {
    const wallet = rpc.addWallet();
    rpc.setBalance(wallet, mint, '2000000');
    const result = page.getByRole('article', { name: 'Check result' });
    await page.getByLabel('Wallet address').fill(wallet);
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await result.getByText('Access granted').waitFor();
    // The balance in tokens once the mint's decimals are known.
    await result.getByText('2000000 raw units (2 tokens)').waitFor();
    assert.match((await result.textContent()) ?? '', /Fresh from the chain\./);

    rpc.setBalance(wallet, mint, '1');
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await result.getByText(/Answered from the cache, \d+ s old\./).waitFor();
    assert.match((await result.textContent()) ?? '', /Access granted/, 'the cache still has the old balance');

    await page.getByRole('button', { name: 'Refresh from the chain' }).click();
    await result.getByText('No access').waitFor();
    assert.match((await result.textContent()) ?? '', /insufficientBalance/);
    assert.match((await result.textContent()) ?? '', /1 raw units \(0\.000001 tokens\)/);
    await checkScreen(page, 'gate-detail');
  });

  it('edits and disables the gate', async () => {
    await page.getByLabel(/^Minimum holdings(?! in tokens)/).fill('1');
    await page.getByText('1 = 0.000001 tokens').waitFor();
    await page.getByRole('button', { name: 'Save gate' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('button', { name: 'Disable gate' }).click();
    await page.getByRole('button', { name: 'Enable gate' }).waitFor();
    await orgNav('Token gates');
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Holders' }) });
    assert.match((await row.textContent()) ?? '', /Disabled/);
    await checkScreen(page, 'gates-list');
  });

  it('creates a webhook with the event picker; the secret is shown once', async () => {
    await orgNav('Webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByLabel('Endpoint URL').fill(receiver.url('/hook'));
    assert.ok(await page.getByRole('checkbox', { name: /^All events/ }).isChecked());
    assert.ok(await page.getByRole('checkbox', { name: /^member\.added/ }).isDisabled(), '* covers it');
    await page.getByRole('checkbox', { name: /^token\.issued/ }).check();
    await checkScreen(page, 'webhook-create');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    secret = ((await page.getByTestId('webhook-secret').textContent()) ?? '').trim();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const row = page.getByRole('row').filter({ hasText: receiver.url('/hook') });
    assert.match((await row.textContent()) ?? '', /\*, token\.issued/);
    await checkScreen(page, 'webhook-secret');
    await page.getByRole('button', { name: 'I have saved the secret' }).click();
    await page.getByRole('heading', { name: receiver.url('/hook'), level: 1 }).waitFor();
    assert.equal(await page.getByTestId('webhook-secret').count(), 0);
  });

  it('sends a test, sees it in the log with its headers, payload and response', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Succeeded (HTTP 200)' }).waitFor();
    const got = receiver.on('/hook');
    assert.equal(got.length, 1);
    // The secret the console showed verifies the delivery with standardwebhooks.
    const event = new Webhook(secret).verify(got[0].raw, got[0].headers as Record<string, string>) as {
      type: string;
    };
    assert.equal(event.type, 'webhook.test');
    const deliveryId = String(got[0].headers['webhook-id']);
    await page.getByRole('button', { name: `Show details of delivery ${deliveryId}` }).click();
    await page.getByText(`webhook-id: ${deliveryId}`).waitFor();
    assert.ok(await page.getByText('webhook-signature: (computed at each attempt)').isVisible());
    assert.ok(await page.getByText('"test": true').isVisible());
    await checkScreen(page, 'webhook-detail');

    const filters = page.getByRole('form', { name: 'Filter deliveries' });
    await filters.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter deliveries' }).click();
    await page.getByText('No deliveries match.').waitFor();
    await filters.getByLabel('Status').selectOption('succeeded');
    await filters.getByLabel('Event').selectOption('webhook.test');
    await page.getByRole('button', { name: 'Filter deliveries' }).click();
    await page.getByRole('button', { name: `Show details of delivery ${deliveryId}` }).waitFor();
  });

  it('a failing receiver gets the webhook disabled; the console says why and re-enables it', async () => {
    receiver.reply = () => ({ status: 500, body: 'down for maintenance' });
    const org = await t.ctx.db
      .selectFrom('orgs')
      .select(['id', 'slug'])
      .where('slug', '=', orgSlug)
      .executeTakeFirstOrThrow();
    const worker = webhookWorker(t.ctx);
    const started = t.clock.now();
    for (let i = 0; i < 20; i++)
      await fireEvent(t, { ...org, roles: {} as never }, null, 'member.added', {
        user: `usr_${i}`,
        roles: [],
      });
    // Each delivery: a first attempt and five retries (1, 4, 16, 64, 256 s); the clock steps past each.
    for (let attempt = 0; attempt < 6; attempt++) {
      assert.equal(await worker.runOnce(), 20);
      t.clock.advance(300);
    }
    // Back to the browser's time, so the console's tokens look as fresh as they are.
    t.clock.set(started);
    const hook = await t.ctx.db.selectFrom('webhooks').selectAll().executeTakeFirstOrThrow();
    assert.equal(hook.enabled, false);

    await page.reload();
    const notice = page.getByRole('article', { name: 'Disabled automatically' });
    await notice.waitFor();
    // The last failures load after the notice.
    await notice.getByRole('listitem').first().waitFor();
    assert.match((await notice.textContent()) ?? '', /after 20 consecutive failed deliveries/);
    assert.match((await notice.textContent()) ?? '', /HTTP 500/);
    assert.match((await notice.textContent()) ?? '', /down for maintenance/);
    await checkScreen(page, 'webhook-disabled');

    receiver.reply = () => ({ status: 200, body: 'ok' });
    await notice.getByRole('button', { name: 'Re-enable webhook' }).click();
    await page.getByText('Enabled · 0 consecutive failed deliveries').waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Succeeded (HTTP 200)' }).waitFor();
    assert.equal(receiver.on('/hook').at(-1)?.headers['service-event'], 'webhook.test');
  });

  it('edits the events with the same picker', async () => {
    await page.getByText('Edit URL and events').click();
    const box = page.getByRole('checkbox', { name: /^token\.issued/ });
    assert.ok(await box.isChecked());
    await box.uncheck();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const hook = await t.ctx.db.selectFrom('webhooks').select('events').executeTakeFirstOrThrow();
    assert.deepEqual(hook.events, ['*']);
  });

  it('filters the audit log with the filters in the URL, pages it, and exports it', async () => {
    await orgNav('Audit log');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const rows = page.getByRole('table').getByRole('row');
    await rows.nth(1).waitFor();
    await page.getByLabel('Action').fill('webhook.tested');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((u) => u.searchParams.get('action') === 'webhook.tested');
    await page.getByText('1–2 of 2').waitFor();
    assert.equal(await rows.count(), 3);
    // Actors by name, not id; the automatic disable is the system's.
    const wallet = await t.ctx.db.selectFrom('user_public_keys').select('address').executeTakeFirstOrThrow();
    const actor = (await rows.nth(1).getByRole('cell').nth(1).textContent()) ?? '';
    assert.equal(actor, `wallet ${wallet.address.slice(0, 4)}…${wallet.address.slice(-4)}`);
    await rows.nth(1).getByText('Show').click();
    assert.match((await rows.nth(1).textContent()) ?? '', /"deliveryId"/);
    await checkScreen(page, 'audit-log');

    // A reload keeps the filter (it is in the URL).
    await page.reload();
    await page.getByText('1–2 of 2').waitFor();
    assert.equal(await page.getByLabel('Action').inputValue(), 'webhook.tested');

    const csv = await download(page, 'Export CSV');
    assert.equal(csv.name.endsWith('.csv'), true);
    const lines = csv.text.trim().split('\r\n');
    assert.equal(lines[0], 'id,timestamp,actorUserId,action,resourceType,resourceId,metadata');
    assert.equal(lines.length, 3);
    assert.ok(lines.slice(1).every((l) => l.includes(',webhook.tested,')));
    const exported = JSON.parse((await download(page, 'Export JSON')).text) as { action: string }[];
    assert.deepEqual(
      exported.map((e) => e.action),
      ['webhook.tested', 'webhook.tested'],
    );

    await page.getByLabel('Action').fill('webhook.disabled');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('1–1 of 1').waitFor();
    assert.match((await rows.nth(1).textContent()) ?? '', /System/);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((u) => u.search === '');
    await page.getByLabel('Entries per page').selectOption('25');
    await page.waitForURL((u) => u.searchParams.get('limit') === '25');
    await page.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL((u) => u.searchParams.get('offset') === '25');
    await page.getByText(/^26–/).waitFor();
  });

  it('a Member sees gates, webhooks and the audit log, with every change disabled and why', async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const wallet = await injectWallet(other);
    const p = await other.newPage();
    watchPage(p, problems);
    await p.goto(`${base}/console/`);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(/\/signin\//);
    await p.getByRole('button', { name: 'Continue with Phantom' }).click();
    await p.getByRole('heading', { name: 'Your organizations' }).waitFor();
    const { user_id } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    const org = await t.ctx.db
      .selectFrom('orgs')
      .select('id')
      .where('slug', '=', orgSlug)
      .executeTakeFirstOrThrow();
    const role = await t.ctx.db
      .selectFrom('roles')
      .select('id')
      .where('org_id', '=', org.id)
      .where('built_in', '=', 'member')
      .executeTakeFirstOrThrow();
    const now = t.clock.now();
    await t.ctx.db
      .insertInto('org_members')
      .values({ org_id: org.id, user_id, joined_at: now, disabled_at: null })
      .execute();
    await t.ctx.db
      .insertInto('member_roles')
      .values({ org_id: org.id, user_id, role_id: role.id, assigned_at: now })
      .execute();

    const reason = async (name: string) => {
      const button = p.getByRole('button', { name, exact: true });
      assert.ok(await button.isDisabled(), `${name} is disabled`);
      const id = await button.getAttribute('aria-describedby');
      return p.locator(`[id="${id}"]`).textContent();
    };
    await p.goto(`${base}${orgUrl}/token-gates`);
    await p.getByRole('link', { name: 'Holders' }).click();
    await p.getByRole('heading', { name: 'Holders', level: 1 }).waitFor();
    assert.equal(await reason('Delete gate'), 'Needs the permission org.tokenGates.edit.');
    assert.ok(await p.getByRole('button', { name: 'Check', exact: true }).isVisible(), 'anyone may check');
    await checkScreen(p, 'member-gate');
    await p.goto(`${base}${orgUrl}/webhooks`);
    assert.equal(await reason('Add webhook'), 'Needs the permission org.webhooks.edit.');
    await p.getByRole('link', { name: receiver.url('/hook') }).click();
    assert.equal(await reason('Send test event'), 'Needs the permission org.webhooks.edit.');
    await p.goto(`${base}${orgUrl}/audit-log?action=webhook.tested`);
    await p.getByText('1–2 of 2').waitFor();
    await other.close();
  });

  it('no CSP violation or page error happened on any screen', () => {
    assert.deepEqual(problems, []);
  });
});

async function download(page: Page, button: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button }).click(),
  ]);
  const path = await file.path();
  return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
}
