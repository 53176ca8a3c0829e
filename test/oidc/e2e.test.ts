import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { ManualClock } from '../../src/lib/clock.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { freePort } from '../helpers/net.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';

let t: TestApp;
let base: string;
let rp: SeededClient;
let config: oidc.Configuration;

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Real time: the relying party checks the ID token's iat and exp against its own clock.
  t = await buildTestApp({
    env: { BASE_URL: base, RATE_LIMIT_MULTIPLIER: '1000' },
    clock: new ManualClock(Date.now()),
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  // The redirect URI is on this loopback server: the browser never leaves the machine.
  rp = await seedClient(t, { redirectUris: [`${base}/rp/callback`], brand: { name: 'Acme Wallet Club' } });
  config = await oidc.discovery(new URL(base), rp.clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
});
after(() => t.close());

/** The relying party's first step: an authorize URL with PKCE, state and nonce. */
async function startLogin() {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: rp.redirectUri,
    scope: 'openid profile offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, verifier, state, nonce };
}

async function redeem(callback: string, login: Awaited<ReturnType<typeof startLogin>>) {
  return oidc.authorizationCodeGrant(config, new URL(callback), {
    pkceCodeVerifier: login.verifier,
    expectedState: login.state,
    expectedNonce: login.nonce,
    idTokenExpected: true,
  });
}

describe('end to end over HTTP with openid-client as the relying party', () => {
  it('headless API: authorize → wallet sign-in → consent → code exchanged with PKCE for verified tokens', async () => {
    const login = await startLogin();
    const wallet = createTestWallet();
    const auth = await fetch(login.url, { redirect: 'manual' });
    assert.equal(auth.status, 302);
    const signinUrl = auth.headers.get('location') ?? '';
    const id = signinUrl.match(/\/signin\/([A-Za-z0-9]+)$/)?.[1];
    assert.ok(id, signinUrl);
    assert.ok(signinUrl.startsWith(`${base}/signin/`));
    // The browser-binding cookie authorize set: every interaction call of this browser sends it.
    const binding = (auth.headers.get('set-cookie') ?? '').split(';')[0] as string;
    assert.match(binding, new RegExp(`^gh_ia_${id}=`));

    const post = (path: string, body: unknown, cookie = '') =>
      fetch(`${base}/interactions/${id}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: base,
          cookie: cookie ? `${binding}; ${cookie}` : binding,
        },
        body: JSON.stringify(body),
      });
    const elsewhere = await fetch(`${base}/interactions/${id}`);
    assert.equal(elsewhere.status, 403, 'another browser (no binding cookie) cannot read it');
    const challenge = (await (await post('/wallet/challenge', { address: wallet.address })).json()) as {
      message: string;
    };
    assert.ok(challenge.message.startsWith(`127.0.0.1:${base.split(':')[2]} wants you to sign in`));
    const verify = await post('/wallet/verify', wallet.prove(challenge.message));
    assert.equal(verify.status, 200);
    assert.deepEqual(await verify.json(), { step: 'consent' });
    const cookie = (verify.headers.get('set-cookie') ?? '').split(';')[0];
    assert.match(cookie, /^gh_session_/);
    const consent = await post('/consent', { decision: 'allow' }, cookie);
    assert.equal(consent.status, 200);
    const { redirectTo } = (await consent.json()) as { redirectTo: string };

    const tokens = await redeem(redirectTo, login);
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.ok(tokens.access_token);
    assert.ok(tokens.refresh_token, 'offline_access was granted');
    const claims = tokens.claims();
    assert.ok(claims?.sub);
    assert.equal(claims?.iss, base);
    const key = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    assert.equal(claims?.sub, key.user_id);
  });

  it('hosted page in headless Chromium: wallet button, consent, arrival at the redirect URI with a code', async (ctx) => {
    if (!existsSync(CHROMIUM)) {
      ctx.skip(`${CHROMIUM} is not installed (apt-get install -y chromium); CI installs it`);
      return;
    }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    try {
      const wallet = createTestWallet();
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      // The Node key signs for the page, as a wallet extension would.
      await page.exposeFunction('__testWalletSign', (b64: string) =>
        wallet.signBytes(Buffer.from(b64, 'base64')).toString('base64'),
      );
      // A string, not a function: the test runner's transpiler would add helpers the page lacks.
      await page.addInitScript(`
        window.solana = {
          isConnected: true,
          publicKey: { toBase58: () => ${JSON.stringify(wallet.address)}, toString: () => ${JSON.stringify(wallet.address)} },
          async signMessage(bytes) {
            let s = '';
            for (const b of bytes) s += String.fromCharCode(b);
            const sig = atob(await window.__testWalletSign(btoa(s)));
            return { signature: Uint8Array.from(sig, (c) => c.charCodeAt(0)) };
          },
        };`);

      const login = await startLogin();
      await page.goto(login.url.href);
      assert.match(page.url(), /\/signin\/[A-Za-z0-9]+$/);
      assert.equal(await page.textContent('#brand-name'), 'Acme Wallet Club');
      // An injected provider that names no brand is listed as "Solana wallet".
      await page.getByRole('button', { name: 'Continue with Solana wallet' }).click();
      await page.waitForSelector('#consent-view:not([hidden])', { timeout: 15_000 }).catch(async (e) => {
        throw new Error(
          `no consent view; status: ${await page.textContent('#status')}; errors: ${errors.join(', ')}; ${e}`,
        );
      });
      assert.ok((await page.textContent('#consent-scopes'))?.includes('Stay connected'));
      await Promise.all([page.waitForURL(/\/rp\/callback\?/), page.click('#consent-allow')]);
      const arrived = new URL(page.url());
      assert.equal(`${arrived.origin}${arrived.pathname}`, rp.redirectUri);
      assert.ok(arrived.searchParams.get('code'));
      assert.equal(arrived.searchParams.get('state'), login.state);
      assert.deepEqual(errors, []);

      const tokens = await redeem(arrived.href, login);
      assert.ok(tokens.claims()?.sub);
    } finally {
      await browser.close();
    }
  });
});
