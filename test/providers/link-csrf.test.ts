import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleToken } from '../helpers/app.js';
import { followAuthorize, telegramHash } from '../helpers/mock-providers.js';
import { collectCookies, cookieHeader, seedClient } from '../helpers/signin.js';
import {
  BOT_TOKEN,
  type ProviderWorld,
  answerLinkPage,
  deliver,
  pathOf,
  providerSignIn,
  providerWorld,
  startInteraction,
} from './setup.js';

/**
 * Review finding 2: `POST /users/me/authentication-providers/<type>/link` returned an
 * authorizationUrl any browser could complete, so an attacker could have a victim's provider
 * account linked into the attacker's Gatehouse account. A link is bound to the browser and user
 * that started it and ends on a confirmation page.
 */
describe('provider link: bound to its browser and user, confirmed before linking', () => {
  let w: ProviderWorld;
  let attacker: { id: string; auth: { authorization: string } };
  let victim: { id: string; auth: { authorization: string } };

  async function signedInUser(profile: { id: string; username: string }) {
    w.mock.realms.get('x')!.profile = { data: profile };
    const client = await seedClient(w.t, { firstParty: true, redirectUris: [`${w.mock.url}/app/callback`] });
    const { res } = await providerSignIn(w, await startInteraction(w, client), 'x');
    assert.equal(res.statusCode, 302, res.body);
    const { user_id: id } = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('user_id')
      .where('external_user_id', '=', profile.id)
      .executeTakeFirstOrThrow();
    await w.t.ctx.db.updateTable('users').set({ username: profile.username }).where('id', '=', id).execute();
    return { id, auth: { authorization: `Bearer ${await consoleToken(w.t, id)}` } };
  }

  before(async () => {
    w = await providerWorld();
    attacker = await signedInUser({ id: 'x-attacker', username: 'mallory' });
    victim = await signedInUser({ id: 'x-victim', username: 'alice' });
  });
  after(() => w.close());

  async function startLink(type: string, auth: { authorization: string }) {
    const res = await w.inject({
      method: 'POST',
      url: `/users/me/authentication-providers/${type}/link`,
      headers: auth,
    });
    assert.equal(res.statusCode, 200, res.body);
    return { url: res.json().authorizationUrl as string, jar: collectCookies(res) };
  }

  const discordLinks = (userId: string) =>
    w.t.ctx.db
      .selectFrom('oauth_links')
      .select('external_user_id')
      .where('user_id', '=', userId)
      .where('provider', '=', 'discord')
      .execute();

  it("refuses the attacker's link URL completed in the victim's browser, and burns nothing", async () => {
    w.mock.realms.get('discord')!.profile = { id: 'discord-victim', username: 'alice#1' };
    const started = await startLink('discord', attacker.auth);
    // The victim's browser: its own cookies (a console session of its own), not the attacker's.
    const back = await followAuthorize(started.url);
    const victimBrowser = { gh_unrelated: 'x' };
    const refused = await deliver(w, back, victimBrowser, false);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.body, /started in another browser/);
    assert.deepEqual(await discordLinks(attacker.id), []);
    // Checked before consuming: the state is still live for the browser that started it.
    const state = await w.t.ctx.db
      .selectFrom('provider_states')
      .select('consumed_at')
      .where('purpose', '=', 'link')
      .where('user_id', '=', attacker.id)
      .executeTakeFirstOrThrow();
    assert.equal(state.consumed_at, null);
  });

  it('the starting browser sees "Link Discord account X to Gatehouse account Y?" and nothing is linked before Confirm', async () => {
    w.mock.realms.get('discord')!.profile = { id: 'discord-victim-2', username: 'victim-two' };
    const { url, jar } = await startLink('discord', victim.auth);
    const page = await deliver(w, await followAuthorize(url), jar, false);
    assert.equal(page.statusCode, 200, page.body);
    assert.match(
      page.body,
      /Link Discord account <strong id="provider-account">victim-two<\/strong> to Gatehouse account <strong id="gatehouse-account">alice<\/strong>\?/,
    );
    assert.match(page.body, /<button type="submit" name="decision" value="confirm"[^>]*>Confirm<\/button>/);
    assert.match(page.body, /<button type="submit" name="decision" value="cancel"[^>]*>Cancel<\/button>/);
    assert.match(String(page.headers['content-security-policy']), /form-action 'self'/);
    assert.deepEqual(await discordLinks(victim.id), []);

    // Another browser cannot answer it, even with the page's token; nor a cross-origin form.
    const stranger = await answerLinkPage(w, page, {});
    assert.equal(stranger.statusCode, 403, stranger.body);
    const crossSite = await answerLinkPage(w, page, jar, 'confirm', { origin: 'https://evil.example' });
    assert.equal(crossSite.statusCode, 403);
    // A sandboxed cross-site frame posts with `Origin: null`; its Sec-Fetch-Site still gives it away.
    const sandboxed = await answerLinkPage(w, page, jar, 'confirm', {
      origin: 'null',
      'sec-fetch-site': 'cross-site',
    });
    assert.equal(sandboxed.statusCode, 403);
    const forged = await w.inject({
      method: 'POST',
      url: /action="([^"]+)"/.exec(page.body)![1],
      payload: new URLSearchParams({ csrf_token: 'f'.repeat(64), decision: 'confirm' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    });
    assert.equal(forged.statusCode, 403);
    assert.deepEqual(await discordLinks(victim.id), []);

    const done = await answerLinkPage(w, page, jar);
    assert.equal(done.statusCode, 200, done.body);
    assert.match(done.body, /Discord account linked/);
    assert.deepEqual(await discordLinks(victim.id), [{ external_user_id: 'discord-victim-2' }]);
    // Answered once; the sealed identity is gone from the row.
    assert.equal((await answerLinkPage(w, page, jar)).statusCode, 404);
    const row = await w.t.ctx.db
      .selectFrom('provider_states')
      .select(['pending_link_enc', 'confirmed_at'])
      .where('user_id', '=', victim.id)
      .where('purpose', '=', 'link')
      .where('confirmed_at', 'is not', null)
      .executeTakeFirstOrThrow();
    assert.equal(row.pending_link_enc, null);
  });

  it('Cancel links nothing', async () => {
    w.mock.realms.get('discord')!.profile = { id: 'discord-cancelled', username: 'nope' };
    const { url, jar } = await startLink('discord', attacker.auth);
    const page = await deliver(w, await followAuthorize(url), jar, false);
    const res = await answerLinkPage(w, page, jar, 'cancel');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /not linked/);
    assert.deepEqual(await discordLinks(attacker.id), []);
  });

  it('Telegram: the widget link is refused in another browser and the link still asks for confirmation', async () => {
    const { url, jar } = await startLink('telegram', victim.auth);
    const elsewhere = await w.inject({ method: 'GET', url: pathOf(url) });
    assert.equal(elsewhere.statusCode, 400);
    const widget = await w.inject({
      method: 'GET',
      url: pathOf(url),
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(widget.statusCode, 200, widget.body);
    collectCookies(widget, jar);
    const f: Record<string, string> = {
      id: '7007',
      username: 'tg-alice',
      auth_date: String(w.t.clock.nowSec()),
    };
    f.hash = telegramHash(f, BOT_TOKEN);
    const page = await w.inject({
      method: 'GET',
      url: `/oauth/telegram/console/callback?${new URLSearchParams(f)}`,
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.body, /Link Telegram account/);
    const done = await answerLinkPage(w, page, jar);
    assert.equal(done.statusCode, 200, done.body);
    const linked = await w.t.ctx.db
      .selectFrom('oauth_links')
      .select('user_id')
      .where('provider', '=', 'telegram')
      .where('external_user_id', '=', '123456789:7007')
      .executeTakeFirstOrThrow();
    assert.equal(linked.user_id, victim.id);
  });
});
