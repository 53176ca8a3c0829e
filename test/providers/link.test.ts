import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleToken } from '../helpers/app.js';
import { followAuthorize, telegramHash } from '../helpers/mock-providers.js';
import { collectCookies, cookieHeader, seedClient, type SeededClient } from '../helpers/signin.js';
import {
  BOT_TOKEN,
  answerLinkPage,
  deliver,
  pathOf,
  providerSignIn,
  providerWorld,
  type ProviderWorld,
  startInteraction,
} from './setup.js';

describe('linking and unlinking providers, restoring accounts, and secrets', () => {
  let w: ProviderWorld;
  let client: SeededClient;
  let userId: string;
  let auth: { authorization: string };

  before(async () => {
    w = await providerWorld();
    client = await seedClient(w.t, { firstParty: true, redirectUris: [`${w.mock.url}/app/callback`] });
    // A user who signed in with Google: one sign-in method.
    const { res } = await providerSignIn(w, await startInteraction(w, client), 'google');
    assert.equal(res.statusCode, 302);
    const link = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('user_id')
      .where('provider', '=', 'google')
      .executeTakeFirstOrThrow();
    userId = link.user_id;
    auth = { authorization: `Bearer ${await consoleToken(w.t, userId)}` };
  });
  after(() => w.close());

  /** The link's browser: the flow cookie the start sets goes with the provider's return. */
  const jar: Record<string, string> = {};
  async function startLink(type: string, headers: Record<string, string> = auth) {
    const res = await w.inject({
      method: 'POST',
      url: `/users/me/authentication-providers/${type}/link`,
      headers,
    });
    collectCookies(res, jar);
    return res;
  }

  /** The provider's return in the link's browser, then Confirm on the confirmation page. */
  async function finishLink(url: string) {
    const page = await deliver(w, await followAuthorize(url), jar);
    if (page.statusCode !== 200 || !page.body.includes('name="csrf_token"')) return page;
    return answerLinkPage(w, page, jar);
  }

  async function linksOf(id: string) {
    return w.t.ctx.db
      .selectFrom('oauth_links')
      .selectAll()
      .where('user_id', '=', id)
      .orderBy('created_at')
      .execute();
  }

  it('starts a link for the console brand and attaches the provider account to the caller', async () => {
    const res = await startLink('discord');
    assert.equal(res.statusCode, 200, res.body);
    const url = new URL(res.json().authorizationUrl);
    assert.equal(url.origin, w.mock.url);
    assert.equal(
      url.searchParams.get('redirect_uri'),
      'http://gatehouse.test/oauth/discord/console/callback',
    );
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    const page = await finishLink(url.toString());
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.body, /Discord account linked/);
    const links = await linksOf(userId);
    assert.deepEqual(
      links.map((l) => l.provider),
      ['google', 'discord'],
    );
    const activity = await w.t.ctx.db
      .selectFrom('activity')
      .select(['type', 'provider'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      activity.filter((a) => a.type === 'link_provider'),
      [{ type: 'link_provider', provider: 'discord' }],
    );
    const providers = await w.inject({
      method: 'GET',
      url: '/users/me/authentication-providers',
      headers: auth,
    });
    assert.equal(providers.statusCode, 200);
    assert.deepEqual(
      providers
        .json()
        .filter((p: { type: string }) => p.type === 'oauth')
        .map((p: { provider: string }) => p.provider)
        .sort(),
      ['discord', 'google'],
    );
  });

  it('links Matrica and offers its wallets without linking them', async () => {
    const res = await startLink('matrica');
    const page = await finishLink(res.json().authorizationUrl);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin/);
    const keys = await w.t.ctx.db
      .selectFrom('user_public_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    assert.equal(keys.length, 0);
  });

  it('links Telegram through the widget page', async () => {
    const res = await startLink('telegram');
    assert.equal(res.statusCode, 200);
    const widget = await w.inject({
      method: 'GET',
      url: pathOf(res.json().authorizationUrl),
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(widget.statusCode, 200, widget.body);
    collectCookies(widget, jar);
    const f: Record<string, string> = {
      id: '5005',
      username: 'linked-tg',
      auth_date: String(w.t.clock.nowSec()),
    };
    f.hash = telegramHash(f, BOT_TOKEN);
    const cb = await w.inject({
      method: 'GET',
      url: `/oauth/telegram/console/callback?${new URLSearchParams(f)}`,
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(cb.statusCode, 200, cb.body);
    assert.equal((await answerLinkPage(w, cb, jar)).statusCode, 200);
    assert.ok(
      (await linksOf(userId)).some(
        (l) => l.provider === 'telegram' && l.external_user_id === '123456789:5005',
      ),
    );
    // The widget link is single use.
    const again = await w.inject({
      method: 'GET',
      url: pathOf(res.json().authorizationUrl),
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(again.statusCode, 404);
  });

  it('refuses to link an account that belongs to another user (409) and records nothing on it', async () => {
    w.mock.realms.get('x')!.profile = { data: { id: 'x-other', username: 'other' } };
    const other = await providerSignIn(w, await startInteraction(w, client), 'x');
    assert.equal(other.res.statusCode, 302);
    const res = await startLink('x');
    const page = await finishLink(res.json().authorizationUrl);
    assert.equal(page.statusCode, 409);
    assert.match(page.body, /linked to another user/);
    assert.ok(!(await linksOf(userId)).some((l) => l.provider === 'x'));
  });

  it('a failed link shows why and records sign_in_failed for the user', async () => {
    const res = await startLink('facebook');
    w.mock.realms.get('facebook')!.nextAuthorizeError = 'access_denied';
    const page = await finishLink(res.json().authorizationUrl);
    assert.equal(page.statusCode, 400);
    assert.match(page.body, /cancelled/);
    const failed = await w.t.ctx.db
      .selectFrom('activity')
      .select(['type', 'provider'])
      .where('user_id', '=', userId)
      .where('type', '=', 'sign_in_failed')
      .execute();
    assert.deepEqual(failed, [{ type: 'sign_in_failed', provider: 'facebook' }]);
  });

  it('refuses a link without a token, for an unknown type, or for a provider without credentials', async () => {
    assert.equal((await startLink('discord', {})).statusCode, 401);
    assert.equal((await startLink('myspace')).statusCode, 400);
    const key = await w.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      payload: { name: 'ci' },
      headers: auth,
    });
    assert.equal(key.statusCode, 201, key.body);
    const withKey = await startLink('discord', { authorization: `Bearer ${key.json().key}` });
    assert.equal(withKey.statusCode, 403);
    assert.deepEqual(withKey.json().error.details.missing, ['access_token']);
    const saved = { ...w.t.ctx.config.providers.facebook };
    w.t.ctx.config.providers.facebook.clientId = undefined;
    try {
      const res = await startLink('facebook');
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'not_found');
    } finally {
      w.t.ctx.config.providers.facebook = saved;
    }
  });

  it('unlinking revokes the provider tokens where the provider can, and never removes the last method', async () => {
    const links = await linksOf(userId);
    const discord = links.find((l) => l.provider === 'discord')!;
    const before = w.mock.revocations.length;
    const del = await w.inject({
      method: 'DELETE',
      url: `/users/me/oauth-tokens/${discord.id}`,
      headers: auth,
    });
    assert.equal(del.statusCode, 204, del.body);
    const revoked = w.mock.revocations.slice(before);
    assert.equal(revoked.length, 1);
    assert.equal(revoked[0].realm, 'discord');
    assert.equal(revoked[0].clientId, 'discord-client');
    assert.equal(revoked[0].hint, 'refresh_token');
    assert.match(revoked[0].token, /^rt-discord-/);
    for (const l of (await linksOf(userId)).filter((x) => x.provider !== 'google')) {
      const r = await w.inject({ method: 'DELETE', url: `/users/me/oauth-tokens/${l.id}`, headers: auth });
      assert.equal(r.statusCode, 204);
    }
    const google = (await linksOf(userId)).find((l) => l.provider === 'google')!;
    const last = await w.inject({
      method: 'DELETE',
      url: `/users/me/oauth-tokens/${google.id}`,
      headers: auth,
    });
    assert.equal(last.statusCode, 422);
    assert.equal(last.json().error.code, 'unprocessable_entity');
    assert.equal((await linksOf(userId)).length, 1);
  });

  it('signing in with the same provider account during the grace window restores the account', async () => {
    w.mock.realms.get('x')!.profile = { data: { id: 'x-restorable', username: 'restorable' } };
    const first = await providerSignIn(w, await startInteraction(w, client), 'x');
    assert.equal(first.res.statusCode, 302);
    const { user_id: xUser } = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('user_id')
      .where('external_user_id', '=', 'x-restorable')
      .executeTakeFirstOrThrow();
    const del = await w.inject({
      method: 'DELETE',
      url: '/users/me',
      headers: { authorization: `Bearer ${await consoleToken(w.t, xUser)}` },
    });
    assert.equal(del.statusCode, 204, del.body);
    w.t.clock.advance(3 * 24 * 3600);
    const again = await providerSignIn(w, await startInteraction(w, client), 'x');
    assert.equal(again.res.statusCode, 302, again.res.body);
    assert.ok(new URL(again.res.headers.location as string).searchParams.get('code'));
    const row = await w.t.ctx.db
      .selectFrom('oauth_links')
      .innerJoin('users', 'users.id', 'oauth_links.user_id')
      .select(['users.id', 'users.deleted_at'])
      .where('oauth_links.external_user_id', '=', 'x-restorable')
      .executeTakeFirstOrThrow();
    assert.equal(row.id, xUser);
    assert.equal(row.deleted_at, null);
  });

  it('expired link states are swept; live ones stay', async () => {
    const { deleteExpiredProviderStates } = await import('../../src/stores/provider-states.store.js');
    const res = await startLink('google', { authorization: `Bearer ${await consoleToken(w.t, userId)}` });
    assert.equal(res.statusCode, 200);
    const live = () =>
      w.t.ctx.db
        .selectFrom('provider_states')
        .select('id')
        .where('purpose', '=', 'link')
        .where('consumed_at', 'is', null)
        .execute();
    await deleteExpiredProviderStates(w.t.ctx.db, w.t.clock.now());
    const before = (await live()).length;
    assert.ok(before >= 1, 'the fresh link state survives a sweep');
    const swept = await deleteExpiredProviderStates(w.t.ctx.db, new Date(w.t.clock.nowMs() + 11 * 60 * 1000));
    assert.ok(swept >= before);
    assert.equal((await live()).length, 0);
  });

  it('after every provider has been used, no provider secret or token is in a response, audit entry, event or row', async () => {
    for (const type of ['apple', 'microsoft', 'facebook', 'matrica']) {
      const { res } = await providerSignIn(w, await startInteraction(w, client), type);
      assert.ok([302, 303].includes(res.statusCode), `${type}: ${res.statusCode}`);
    }
    const secrets = [...new Set(w.mock.issued)].filter((s) => s.length >= 8);
    assert.ok(secrets.length > 20, 'the scan has material');
    const tables = [
      'audit_log',
      'events',
      'activity',
      'oauth_links',
      'provider_states',
      'users',
      'connections',
    ] as const;
    const rows: string[] = [];
    for (const table of tables)
      rows.push(JSON.stringify(await w.t.ctx.db.selectFrom(table).selectAll().execute()));
    const haystacks = [...w.seen, ...rows];
    for (const secret of secrets) {
      for (const h of haystacks)
        assert.ok(!h.includes(secret), `a provider secret or token leaked: ${secret.slice(0, 12)}…`);
    }
  });
});
