import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningServer, startServer } from '../helpers/server.js';
import { runExample } from './run.js';

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
    assert.match(stdout, /^refresh: new access token true, expires in 3600 s$/m);
    assert.match(stdout, /^signed out true; refresh afterwards answers 401$/m);
    // The user is the test wallet, signed in through the hosted flow and its consent step.
    assert.match(stderr, /signing in to Example web app \(Example rp-shop\) as wallet \w+/);
    assert.match(stderr, /consent: allow/);
  });
});
