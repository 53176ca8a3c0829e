import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningServer, startServer } from '../helpers/server.js';
import { runExample, startExample } from './run.js';

/** examples/relying-party: openid-client signs a test wallet in, refreshes and signs out. */
describe('example: web app relying party (openid-client)', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer();
  });
  after(() => srv.stop());

  it('signs a wallet in with PKCE, reads userinfo, refreshes, and signs out', async () => {
    const { code, stdout, stderr } = await runExample('examples/relying-party/run.mjs', {
      ...srv.env,
      GATEHOUSE_URL: srv.url,
    });
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /^registered (web|native) app \w+ in brand rp-shop-[0-9a-f]{8}/m);
    assert.match(stdout, /^\/login sent the browser to \/oauth2\/authorize$/m);
    const sub = /^signed in as (usr_\w+); userinfo (\{.*\}); scope "openid profile offline_access"$/m.exec(
      stdout,
    );
    assert.ok(sub, stdout);
    assert.equal(JSON.parse(sub[2]).sub, sub[1], 'userinfo is the ID token’s subject');
    // openid-client counts the lifetime down from when the answer arrived: a loaded machine may take
    // a second or more between the refresh and this line.
    const lifetime = Number(/^refresh: new access token true, expires in (\d+) s$/m.exec(stdout)?.[1]);
    assert.ok(lifetime > 3540 && lifetime <= 3600, stdout);
    assert.match(stdout, /^signed out true; refresh afterwards answers 401$/m);
    // The user is the test wallet, signed in through the hosted flow and its consent step.
    assert.match(stderr, /signing in to Example web app \(Example rp-shop\) as wallet \w+/);
    assert.match(stderr, /consent: allow/);
  });

  it('--serve keeps the app running for a browser: /login redirects to the issuer with PKCE', async () => {
    const app = await startExample(
      'examples/relying-party/run.mjs',
      { ...srv.env, GATEHOUSE_URL: srv.url },
      /^open (http:\/\/127\.0\.0\.1:\d+)\/login /m,
      ['--serve'],
    );
    try {
      const origin = app.match[1];
      const home = await fetch(`${origin}/`);
      assert.match(await home.text(), /Sign in with Gatehouse/);
      const login = await fetch(`${origin}/login`, { redirect: 'manual' });
      assert.equal(login.status, 302);
      assert.match(String(login.headers.get('set-cookie')), /^rp_session=[\w-]{43}; HttpOnly; SameSite=Lax/);
      const to = new URL(String(login.headers.get('location')));
      assert.equal(`${to.origin}${to.pathname}`, `${srv.url}/oauth2/authorize`);
      assert.equal(to.searchParams.get('redirect_uri'), `${origin}/callback`);
      assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
      for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(to.searchParams.get(p), p);
      // A callback this browser did not start is refused before any code is exchanged.
      const forged = await fetch(`${origin}/callback?code=x&state=y`);
      assert.equal(forged.status, 400);
    } finally {
      await app.stop();
    }
  });
});
