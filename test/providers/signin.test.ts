import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cookieHeader, seedClient, type SeededClient } from '../helpers/signin.js';
import { seedConnection } from '../helpers/mock-providers.js';
import { providerSignIn, providerWorld, type ProviderWorld, startInteraction } from './setup.js';

const ALL = ['solana', 'google', 'apple', 'microsoft', 'discord', 'facebook', 'x', 'telegram', 'matrica'];

describe('upstream sign-in: each provider through the mock', () => {
  let w: ProviderWorld;
  let client: SeededClient;

  before(async () => {
    w = await providerWorld();
    client = await seedClient(w.t, {
      firstParty: true,
      redirectUris: [`${w.mock.url}/app/callback`],
      brand: { providerOrder: ['google', 'solana', 'x', 'apple'] },
    });
  });
  after(() => w.close());

  async function signInWith(type: string) {
    const id = await startInteraction(w, client);
    const out = await providerSignIn(w, id, type);
    return { id, ...out };
  }

  async function userOfLink(provider: string, externalUserId: string) {
    const link = await w.t.ctx.db
      .selectFrom('oauth_links')
      .selectAll()
      .where('provider', '=', provider)
      .where('external_user_id', '=', externalUserId)
      .executeTakeFirstOrThrow();
    const user = await w.t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', link.user_id)
      .executeTakeFirstOrThrow();
    return { link, user };
  }

  it('lists the enabled providers in the brand order, wallet included, operator defaults counted', async () => {
    const id = await startInteraction(w, client);
    const res = await w.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.equal(res.statusCode, 200);
    const providers = res.json().providers as string[];
    assert.deepEqual(providers.slice(0, 4), ['google', 'solana', 'x', 'apple']);
    assert.deepEqual([...providers].sort(), [...ALL].sort());
  });

  it('google: state, nonce and S256 PKCE to the provider, redirect_uri is the brand callback URL', async () => {
    const { res, authorizeUrl } = await signInWith('google');
    const q = authorizeUrl.searchParams;
    assert.equal(authorizeUrl.pathname, '/google/authorize');
    assert.equal(q.get('client_id'), 'google-client');
    const brand = await w.t.ctx.db
      .selectFrom('brands')
      .select('oauth_callback_id')
      .where('id', '=', client.brandId)
      .executeTakeFirstOrThrow();
    assert.equal(
      q.get('redirect_uri'),
      `http://gatehouse.test/oauth/google/${brand.oauth_callback_id}/callback`,
    );
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('scope'), 'openid email profile');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((q.get('state') ?? '').length >= 43);
    assert.ok((q.get('nonce') ?? '').length >= 43);
    // The state is stored hashed only.
    const rows = await w.t.ctx.db
      .selectFrom('provider_states')
      .select(['state_hash', 'code_verifier_enc', 'nonce_enc'])
      .execute();
    assert.ok(rows.every((r) => r.state_hash !== q.get('state')));
    assert.ok(rows.every((r) => !r.code_verifier_enc?.includes(q.get('code_challenge')!)));

    assert.equal(res.statusCode, 302, res.body);
    const back = new URL(res.headers.location as string);
    assert.equal(`${back.origin}${back.pathname}`, client.redirectUri);
    assert.ok(back.searchParams.get('code'));
    assert.ok(res.cookies.some((c) => c.name.startsWith('gh_session_')));

    const { link, user } = await userOfLink('google', 'g-1001');
    assert.equal(user.first_name, 'Ada');
    assert.equal(user.last_name, 'Lovelace');
    assert.equal(user.external_profile_picture_url, 'https://pictures.example.com/ada.png');
    assert.equal(user.email, 'ada@example.com');
    assert.equal(user.email_verified, true);
    assert.equal(user.username, null);
    assert.equal(link.email_address, 'ada@example.com');
    assert.equal(link.brand_id, client.brandId);
    assert.ok(link.access_token_enc && !link.access_token_enc.includes('at-google'));
    assert.ok(link.refresh_token_enc && !link.refresh_token_enc.includes('rt-google'));
    const activity = await w.t.ctx.db
      .selectFrom('activity')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.deepEqual(
      activity.map((a) => [a.type, a.provider]),
      [['sign_in', 'google']],
    );
  });

  it('google again: finds the same account and refreshes the stored tokens', async () => {
    const before = await userOfLink('google', 'g-1001');
    const { res } = await signInWith('google');
    assert.equal(res.statusCode, 302);
    const after = await userOfLink('google', 'g-1001');
    assert.equal(after.user.id, before.user.id);
    assert.notEqual(after.link.access_token_enc, before.link.access_token_enc);
    const count = await w.t.ctx.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const links = await w.t.ctx.db
      .selectFrom('oauth_links')
      .selectAll()
      .where('user_id', '=', before.user.id)
      .execute();
    assert.equal(links.length, 1);
    assert.ok(Number(count.n) >= 1);
  });

  it('apple: form_post return, client secret JWT accepted by the provider, name from the first post', async () => {
    const { res, authorizeUrl } = await signInWith('apple');
    assert.equal(authorizeUrl.searchParams.get('response_mode'), 'form_post');
    assert.equal(authorizeUrl.searchParams.get('scope'), 'name email');
    assert.ok(authorizeUrl.searchParams.get('nonce'));
    assert.equal(res.statusCode, 303, res.body);
    assert.ok(new URL(res.headers.location as string).searchParams.get('code'));
    const secretJwt = w.mock.tokenRequests
      .filter((r) => r.realm === 'apple')
      .at(-1)!
      .body.get('client_secret')!;
    assert.equal(secretJwt.split('.').length, 3);
    const { user } = await userOfLink('apple', 'apple-000123.abc');
    assert.equal(user.first_name, 'Grace');
    assert.equal(user.last_name, 'Hopper');
    assert.equal(user.email_verified, true);
  });

  it('microsoft: ID token verified with the configured issuer; account keyed by tenant and object id', async () => {
    const { res } = await signInWith('microsoft');
    assert.equal(res.statusCode, 302, res.body);
    const { user, link } = await userOfLink(
      'microsoft',
      '9188040d-6c67-4c5b-b112-36a304b66dad:00000000-0000-0000-66f3-3332eca7ea81',
    );
    assert.equal(user.first_name, 'Alan');
    assert.equal(user.last_name, 'Turing');
    assert.equal(link.email_address, 'alan@example.com');
  });

  it('discord: user info API, username suggestion kept when free and valid', async () => {
    const { res, authorizeUrl } = await signInWith('discord');
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(authorizeUrl.searchParams.get('scope'), 'identify email');
    assert.equal(authorizeUrl.searchParams.get('nonce'), null);
    const { user } = await userOfLink('discord', '80351110224678912');
    assert.equal(user.username, 'nelly');
    assert.equal(
      user.external_profile_picture_url,
      'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
    );
  });

  it('x: OAuth 2.0 with PKCE and HTTP Basic client authentication', async () => {
    const { res } = await signInWith('x');
    assert.equal(res.statusCode, 302, res.body);
    const req = w.mock.tokenRequests.filter((r) => r.realm === 'x').at(-1)!;
    assert.ok(req.body.get('code_verifier'));
    assert.equal(req.body.get('client_secret'), null);
    const { user } = await userOfLink('x', '2244994945');
    assert.equal(user.username, 'jack-x');
    assert.equal(user.first_name, 'Jack');
  });

  it('facebook: Graph /me fields; an email never marks the account verified', async () => {
    const { res } = await signInWith('facebook');
    assert.equal(res.statusCode, 302, res.body);
    const { user } = await userOfLink('facebook', '10150000000000001');
    assert.equal(user.first_name, 'Mark');
    assert.equal(user.external_profile_picture_url, 'https://pictures.example.com/mark.jpg');
    assert.equal(user.email_verified, false);
  });

  it('matrica: profile and wallets scopes; its wallets are not linked without a signature', async () => {
    const { res, authorizeUrl } = await signInWith('matrica');
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(authorizeUrl.searchParams.get('scope'), 'profile wallets');
    const { user } = await userOfLink('matrica', 'mat-42');
    assert.equal(user.username, 'collector');
    const keys = await w.t.ctx.db.selectFrom('user_public_keys').selectAll().execute();
    assert.equal(keys.length, 0);
  });

  it('an email shared with another provider does not merge accounts', async () => {
    w.mock.realms.get('discord')!.profile = {
      id: '999',
      username: 'ada-discord',
      email: 'ada@example.com',
      verified: true,
    };
    const { res } = await signInWith('discord');
    assert.equal(res.statusCode, 302);
    const google = await userOfLink('google', 'g-1001');
    const discord = await userOfLink('discord', '999');
    assert.notEqual(discord.user.id, google.user.id);
  });

  it('a username already taken is left out', async () => {
    w.mock.realms.get('discord')!.profile = { id: '1000', username: 'nelly' };
    await signInWith('discord');
    const { user } = await userOfLink('discord', '1000');
    assert.equal(user.username, null);
  });

  it('a third-party app goes to the consent step on the hosted page', async () => {
    const thirdParty = await seedClient(w.t, {
      brandId: client.brandId,
      orgId: client.orgId,
      redirectUris: [`${w.mock.url}/app/callback`],
    });
    const id = await startInteraction(w, thirdParty);
    const { res, jar } = await providerSignIn(w, id, 'google');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `http://gatehouse.test/signin/${id}`);
    const view = await w.inject({
      method: 'GET',
      url: `/interactions/${id}`,
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(view.json().step, 'consent');
    const allow = await w.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(allow.statusCode, 200, allow.body);
    assert.ok(new URL(allow.json().redirectTo).searchParams.get('code'));
  });

  it("a brand's own connection replaces the operator's credentials; disabled, the provider is off", async () => {
    w.mock.realms.get('google')!.clients['brand-google-client'] = 'brand-google-secret-abcdef';
    const own = await seedClient(w.t, {
      orgId: client.orgId,
      firstParty: true,
      redirectUris: [`${w.mock.url}/app/callback`],
    });
    await seedConnection(w.t, {
      orgId: own.orgId,
      brandId: own.brandId,
      type: 'google',
      config: { clientId: 'brand-google-client', clientSecret: 'brand-google-secret-abcdef' },
    });
    await seedConnection(w.t, {
      orgId: own.orgId,
      brandId: own.brandId,
      type: 'discord',
      config: { clientId: 'discord-client', clientSecret: 'discord-secret-0123456789' },
      enabled: false,
    });
    const id = await startInteraction(w, own);
    const { res, authorizeUrl } = await providerSignIn(w, id, 'google');
    assert.equal(authorizeUrl.searchParams.get('client_id'), 'brand-google-client');
    assert.equal(res.statusCode, 302, res.body);
    const tokenReq = w.mock.tokenRequests.filter((r) => r.realm === 'google').at(-1)!;
    assert.equal(tokenReq.body.get('client_id'), 'brand-google-client');

    const fresh = await startInteraction(w, own);
    const view = await w.inject({ method: 'GET', url: `/interactions/${fresh}` });
    assert.ok(!view.json().providers.includes('discord'));
    assert.ok(view.json().providers.includes('google'));
    const off = await w.inject({ method: 'GET', url: `/interactions/${fresh}/providers/discord` });
    assert.equal(off.statusCode, 404);
    assert.match(off.body, /Discord sign-in is not enabled for this brand/);

    // Deleting the connection falls back to the operator's credentials.
    await w.t.ctx.db
      .deleteFrom('connections')
      .where('brand_id', '=', own.brandId)
      .where('type', '=', 'google')
      .execute();
    const id2 = await startInteraction(w, own);
    const again = await providerSignIn(w, id2, 'google');
    assert.equal(again.authorizeUrl.searchParams.get('client_id'), 'google-client');
    assert.equal(again.res.statusCode, 302);
  });

  it('the sign-in page links each enabled provider to its start route', async () => {
    const id = await startInteraction(w, client);
    const page = await w.inject({ method: 'GET', url: `/signin/${id}` });
    assert.equal(page.statusCode, 200);
    const order = [...page.body.matchAll(/data-provider="([a-z]+)"/g)].map((m) => m[1]);
    assert.deepEqual(order.slice(0, 4), ['google', 'solana', 'x', 'apple']);
    assert.ok(page.body.includes(`href="/interactions/${id}/providers/google"`));
  });

  it('rejects an unknown provider type and an unknown interaction', async () => {
    const id = await startInteraction(w, client);
    const bad = await w.inject({ method: 'GET', url: `/interactions/${id}/providers/myspace` });
    assert.equal(bad.statusCode, 400);
    const gone = await w.inject({ method: 'GET', url: '/interactions/nosuchinteraction/providers/google' });
    assert.equal(gone.statusCode, 404);
  });
});
