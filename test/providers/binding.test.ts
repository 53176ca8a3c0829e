import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/lib/hash.js';
import { createUser } from '../helpers/app.js';
import { followAuthorize } from '../helpers/mock-providers.js';
import { OTHER_BROWSER } from '../helpers/browser-binding.js';
import { authorizeQuery, randomIp, seedClient, type SeededClient } from '../helpers/signin.js';
import { deliver, providerWorld, type ProviderWorld, startInteraction } from './setup.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Login CSRF: a provider return completes an interaction only in the browser that started it. */
describe('interaction browser binding', () => {
  let w: ProviderWorld;
  let client: SeededClient;

  before(async () => {
    w = await providerWorld();
    client = await seedClient(w.t, { firstParty: true, redirectUris: [`${w.mock.url}/app/callback`] });
  });
  after(() => w.close());

  async function trip(id: string, type: string) {
    const res = await w.inject({
      method: 'GET',
      url: `/interactions/${id}/providers/${type}`,
      remoteAddress: randomIp(),
    });
    assert.equal(res.statusCode, 302, res.body);
    return followAuthorize(res.headers.location as string);
  }

  async function counts() {
    const n = async (table: 'sessions' | 'oauth_links' | 'activity') =>
      Number(
        (
          await w.t.ctx.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return { sessions: await n('sessions'), links: await n('oauth_links'), activity: await n('activity') };
  }

  it('authorize sets an HttpOnly SameSite=Lax cookie per interaction; the row holds only its hash', async () => {
    const res = await w.inject({ method: 'GET', url: `/oauth2/authorize?${authorizeQuery(client)}` });
    assert.equal(res.statusCode, 302);
    const id = /\/signin\/([A-Za-z0-9]+)$/.exec(res.headers.location as string)![1];
    const cookie = res.cookies.find((c) => c.name === `gh_ia_${id}`);
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.ok(!cookie.secure);
    assert.ok(Buffer.from(cookie.value, 'base64url').length >= 32);
    const row = await w.t.ctx.db
      .selectFrom('interactions')
      .select('binding_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.binding_hash, sha256(cookie.value));
  });

  it('a return without the cookie (GET) is refused and records nothing; with it, it signs in', async () => {
    const before = await counts();
    const id = await startInteraction(w, client);
    const victim = await deliver(w, await trip(id, 'google'), {}, false);
    assert.equal(victim.statusCode, 400);
    assert.match(victim.body, /started in another browser/);
    // The state named the brand: the error page is the brand's.
    assert.ok(victim.body.includes(`class="brand-name">${client.brandName}<`), 'branded error page');
    assert.ok(!victim.cookies.some((c) => c.name.startsWith('gh_session_')));
    assert.deepEqual(await counts(), before);
    const row = await w.t.ctx.db
      .selectFrom('interactions')
      .select(['user_id', 'completed_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { user_id: null, completed_at: null });

    // A wrong value is refused too.
    const wrong = await deliver(w, await trip(id, 'google'), { [`gh_ia_${id}`]: 'x'.repeat(43) }, false);
    assert.equal(wrong.statusCode, 400);
    assert.deepEqual(await counts(), before);

    // The browser that started it completes it, and the binding cookie is cleared.
    const own = await deliver(w, await trip(id, 'google'));
    assert.equal(own.statusCode, 302, own.body);
    assert.ok(new URL(own.headers.location as string).searchParams.get('code'));
    assert.ok(own.cookies.some((c) => c.name.startsWith('gh_session_')));
    assert.ok(own.cookies.some((c) => c.name === `gh_ia_${id}` && c.value === ''));
  });

  it('Apple form_post without the cookie is refused; with it, it signs in', async () => {
    const before = await counts();
    const id = await startInteraction(w, client);
    const victim = await deliver(w, await trip(id, 'apple'), {}, false);
    assert.equal(victim.statusCode, 400);
    assert.deepEqual(await counts(), before);
    const own = await deliver(w, await trip(id, 'apple'));
    assert.equal(own.statusCode, 303, own.body);
    assert.ok(new URL(own.headers.location as string).searchParams.get('code'));
  });

  it('several interactions in one browser each complete', async () => {
    const a = await startInteraction(w, client);
    const b = await startInteraction(w, client);
    const backA = await trip(a, 'discord');
    const backB = await trip(b, 'discord');
    const resB = await deliver(w, backB);
    const resA = await deliver(w, backA);
    assert.equal(resA.statusCode, 302, resA.body);
    assert.equal(resB.statusCode, 302, resB.body);
    assert.ok(new URL(resA.headers.location as string).searchParams.get('code'));
    assert.ok(new URL(resB.headers.location as string).searchParams.get('code'));
  });

  it('the device page binds its interaction too: a return without the cookie is refused; with it, it signs in', async () => {
    const tv = await seedClient(w.t, {
      firstParty: true,
      redirectUris: [`${w.mock.url}/app/callback`],
      grantTypes: ['authorization_code', DEVICE_GRANT],
    });
    const started = await w.inject({
      method: 'POST',
      url: '/oauth2/device/authorize',
      payload: new URLSearchParams({ client_id: tv.clientId, scope: 'openid profile' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(started.statusCode, 200, started.body);
    const devicePath = `/device?user_code=${encodeURIComponent(started.json().user_code)}`;
    const page = await w.inject({ method: 'GET', url: devicePath, remoteAddress: randomIp() });
    assert.equal(page.statusCode, 302, page.body);
    const id = /\/signin\/([A-Za-z0-9]+)$/.exec(page.headers.location as string)![1];
    const cookie = page.cookies.find((c) => c.name === `gh_ia_${id}`);
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    const row = await w.t.ctx.db
      .selectFrom('interactions')
      .select(['kind', 'binding_hash'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { kind: 'device', binding_hash: sha256(cookie.value) });

    const before = await counts();
    const victim = await deliver(w, await trip(id, 'google'), {}, false);
    assert.equal(victim.statusCode, 400);
    assert.match(victim.body, /started in another browser/);
    assert.ok(!victim.cookies.some((c) => c.name.startsWith('gh_session_')));
    assert.deepEqual(await counts(), before);

    const own = await deliver(w, await trip(id, 'google'), { [cookie.name]: cookie.value }, false);
    assert.equal(own.statusCode, 302, own.body);
    // Back to /device: the code comes from the browser's device-flow cookie, never from the row.
    assert.equal(own.headers.location, `${w.t.ctx.config.baseUrl}/device`);
    assert.ok(own.cookies.some((c) => c.name.startsWith('gh_session_')));
    assert.ok(own.cookies.some((c) => c.name === `gh_ia_${id}` && c.value === ''));
  });

  it('an interaction without a binding is refused: every browser flow is bound from its start (fails closed)', async () => {
    const id = await startInteraction(w, client);
    const back = await trip(id, 'google');
    await w.t.ctx.db.updateTable('interactions').set({ binding_hash: null }).where('id', '=', id).execute();
    const res = await deliver(w, back, {}, true);
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.body, /started in another browser/);
    // Nor can a trip out start from it, even in the browser that holds the cookie.
    const out = await w.inject({ method: 'GET', url: `/interactions/${id}/providers/google` });
    assert.equal(out.statusCode, 400, out.body);
  });

  it('the trip out starts only in the browser that started the interaction; the page names the user only to it', async () => {
    // Someone who learnt a victim's interaction id starts the provider trip in their own browser (to
    // sign in upstream as themselves and hand the return to the victim): refused, nothing stored.
    const id = await startInteraction(w, client);
    const before = await w.t.ctx.db
      .selectFrom('provider_states')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const elsewhere = [{ [OTHER_BROWSER]: '1' }, { cookie: `gh_ia_${id}=${'x'.repeat(43)}` }];
    for (const headers of elsewhere) {
      const other = await w.inject({
        method: 'GET',
        url: `/interactions/${id}/providers/google`,
        remoteAddress: randomIp(),
        headers,
      });
      assert.equal(other.statusCode, 400, other.body);
      assert.match(other.body, /started in another browser/);
      assert.ok(other.body.includes(`class="brand-name">${client.brandName}<`), 'branded error page');
    }
    const after = await w.t.ctx.db
      .selectFrom('provider_states')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));

    // Signed in (the user is on the interaction, a consent step to go): the hosted page names them
    // only in their own browser.
    const user = await createUser(w.t);
    await w.t.ctx.db.updateTable('interactions').set({ user_id: user.id }).where('id', '=', id).execute();
    const own = await w.inject({ method: 'GET', url: `/signin/${id}` });
    const stranger = await w.inject({
      method: 'GET',
      url: `/signin/${id}`,
      headers: { [OTHER_BROWSER]: '1' },
    });
    assert.equal(own.statusCode, 200);
    assert.equal(stranger.statusCode, 200);
    assert.ok(own.body.includes(`@${user.username}`), 'named to the browser that signed in');
    assert.ok(!stranger.body.includes(user.username), 'not to another');
  });
});

describe('interaction browser binding on an https BASE_URL', () => {
  let w: ProviderWorld;
  let client: SeededClient;

  before(async () => {
    w = await providerWorld({ BASE_URL: 'https://gatehouse.test' });
    client = await seedClient(w.t, { firstParty: true, redirectUris: [`${w.mock.url}/app/callback`] });
  });
  after(() => w.close());

  it('the cookie is SameSite=None; Secure so Apple’s cross-site form_post carries it', async () => {
    const res = await w.inject({ method: 'GET', url: `/oauth2/authorize?${authorizeQuery(client)}` });
    assert.equal(res.statusCode, 302);
    const id = /\/signin\/([A-Za-z0-9]+)$/.exec(res.headers.location as string)![1];
    const cookie = res.cookies.find((c) => c.name === `gh_ia_${id}`);
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'None');
    assert.equal(cookie.secure, true);
    assert.equal(cookie.path, '/');
  });
});
