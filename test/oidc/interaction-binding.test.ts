import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, buildTestApp, json } from '../helpers/app.js';
import { OTHER_BROWSER } from '../helpers/browser-binding.js';
import { type SeededClient, authorizeQuery, seedClient, walletSignIn } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

/**
 * DESIGN §5 / flow-state.ts: an interaction is bound to the browser that started it. Another browser
 * (no binding cookie, or a wrong one) can neither read nor continue it, and its attempt burns
 * nothing: the starting browser still signs in with the same challenge afterwards.
 */
describe('an interaction continues only in the browser that started it', () => {
  let t: TestApp;
  let rp: SeededClient;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
    rp = await seedClient(t, { scopes: ['openid', 'profile'] });
  });
  after(() => t.close());

  async function start() {
    const res = await t.app.inject(`/oauth2/authorize?${authorizeQuery(rp)}`);
    assert.equal(res.statusCode, 302, res.body);
    const id = String(res.headers.location).split('/signin/')[1] as string;
    const binding = res.cookies.find((c) => c.name === `gh_ia_${id}`);
    assert.ok(binding?.httpOnly, 'an HttpOnly binding cookie named after the interaction');
    return id;
  }

  function refused(res: { statusCode: number; body: string }) {
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(json(res).error.code, 'forbidden');
    assert.match(json(res).error.message, /started in another browser/);
  }

  const otherBrowser = { [OTHER_BROWSER]: '1' };
  const wrongCookie = (id: string) => ({ cookie: `gh_ia_${id}=${'A'.repeat(43)}` });

  it('refuses to show it, issue a challenge or verify one without the binding cookie or with a wrong one', async () => {
    const id = await start();
    const wallet = createTestWallet();
    for (const headers of [otherBrowser, wrongCookie(id)]) {
      refused(await t.app.inject({ url: `/interactions/${id}`, headers }));
      refused(
        await t.app.inject({
          method: 'POST',
          url: `/interactions/${id}/wallet/challenge`,
          payload: { address: wallet.address },
          headers,
        }),
      );
    }
    // The starting browser's challenge, verified from another browser: refused, and not burnt.
    const ch = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: { address: wallet.address },
    });
    assert.equal(ch.statusCode, 200, ch.body);
    const proof = wallet.prove(json(ch).message);
    refused(
      await t.app.inject({
        method: 'POST',
        url: `/interactions/${id}/wallet/verify`,
        payload: proof,
        headers: otherBrowser,
      }),
    );
    const verify = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/verify`,
      payload: proof,
    });
    assert.equal(verify.statusCode, 200, verify.body);
  });

  it('a browser holds at most 10 interaction cookies: starting an 11th clears the oldest', async () => {
    // A page that keeps sending one browser to /oauth2/authorize: the browser sends back every
    // cookie it holds, oldest first, and drops those the answers clear.
    const jar = new Map<string, string>();
    const ids: string[] = [];
    for (let i = 0; i < 14; i++) {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await t.app.inject({
        url: `/oauth2/authorize?${authorizeQuery(rp)}`,
        headers: cookie ? { cookie } : {},
      });
      assert.equal(res.statusCode, 302, res.body);
      ids.push(String(res.headers.location).split('/signin/')[1] as string);
      for (const c of res.cookies as Array<{ name: string; value: string }>) {
        if (c.value) jar.set(c.name, c.value);
        else jar.delete(c.name);
      }
      assert.ok(jar.size <= 10, `${jar.size} cookies after ${i + 1} starts`);
    }
    assert.deepEqual(
      [...jar.keys()],
      ids.slice(-10).map((id) => `gh_ia_${id}`),
      'the ten newest',
    );
    const newest = ids.at(-1) as string;
    const show = await t.app.inject({
      url: `/interactions/${newest}`,
      headers: { cookie: `gh_ia_${newest}=${jar.get(`gh_ia_${newest}`)}` },
    });
    assert.equal(show.statusCode, 200, show.body);
    refused(await t.app.inject({ url: `/interactions/${ids[0]}` }));
  });

  it('refuses the consent decision from another browser, even with the signed-in session', async () => {
    const id = await start();
    const { res, jar } = await walletSignIn(t, id, createTestWallet());
    assert.equal(json(res).step, 'consent');
    const session = Object.entries(jar)
      .filter(([k]) => k.startsWith('gh_session_'))
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
    refused(
      await t.app.inject({
        method: 'POST',
        url: `/interactions/${id}/consent`,
        payload: { decision: 'allow' },
        headers: { cookie: session, [OTHER_BROWSER]: '1' },
      }),
    );
    const allowed = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: session },
    });
    assert.equal(allowed.statusCode, 200, allowed.body);
    assert.match(json(allowed).redirectTo, /[?&]code=/);
  });
});
