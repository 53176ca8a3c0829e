import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleToken, createUser } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import { google } from '../../src/providers/google.js';
import { microsoft } from '../../src/providers/microsoft.js';
import { verifyTelegramLogin } from '../../src/providers/telegram.js';
import { followAuthorize, telegramHash } from '../helpers/mock-providers.js';
import { cookieHeader, collectCookies, randomIp, seedClient, type SeededClient } from '../helpers/signin.js';
import {
  BOT_TOKEN,
  BOT_USERNAME,
  deliver,
  pathOf,
  providerSignIn,
  providerWorld,
  type ProviderWorld,
  signinError,
  startInteraction,
} from './setup.js';

describe('upstream sign-in failures', () => {
  let w: ProviderWorld;
  let client: SeededClient;

  const logLines: string[] = [];

  before(async () => {
    w = await providerWorld({ LOG_LEVEL: 'info' }, { write: (line) => void logLines.push(line) });
    client = await seedClient(w.t, { firstParty: true, redirectUris: [`${w.mock.url}/app/callback`] });
  });
  after(() => w.close());

  async function start(type: string) {
    const id = await startInteraction(w, client);
    const res = await w.inject({
      method: 'GET',
      url: `/interactions/${id}/providers/${type}`,
      remoteAddress: randomIp(),
    });
    assert.equal(res.statusCode, 302, res.body);
    return { id, authorizeUrl: res.headers.location as string };
  }

  async function activityOf(userId: string) {
    return w.t.ctx.db
      .selectFrom('activity')
      .select(['type', 'provider'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
  }

  it('a replayed state is refused with an error page, and the first return still counts once', async () => {
    const { id, authorizeUrl } = await start('google');
    const back = await followAuthorize(authorizeUrl);
    const first = await deliver(w, back);
    assert.equal(first.statusCode, 302);
    assert.ok(new URL(first.headers.location as string).searchParams.get('code'));
    const replay = await deliver(w, back);
    assert.equal(replay.statusCode, 400);
    assert.match(replay.body, /expired or was already used/);
    const sessions = await w.t.ctx.db
      .selectFrom('interactions')
      .select('completed_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(sessions.completed_at);
  });

  it('a state for another brand, a missing state and an unknown state are refused', async () => {
    const { authorizeUrl } = await start('google');
    const back = await followAuthorize(authorizeUrl);
    const other = back.url.replace(
      /\/oauth\/google\/[^/]+\/callback/,
      '/oauth/google/someotherbrand/callback',
    );
    const wrongBrand = await w.inject({ method: 'GET', url: pathOf(other) });
    assert.equal(wrongBrand.statusCode, 400);
    // A state redeemed against the wrong brand is not burnt: the right callback still works.
    const right = await deliver(w, back);
    assert.equal(right.statusCode, 302);
    const none = await w.inject({ method: 'GET', url: pathOf(back.url.replace(/state=[^&]+/, '')) });
    assert.equal(none.statusCode, 400);
    const unknown = await w.inject({
      method: 'GET',
      url: pathOf(back.url.replace(/state=[^&]+/, 'state=nope')),
    });
    assert.equal(unknown.statusCode, 400);
  });

  it('a state past its interaction is refused', async () => {
    const { authorizeUrl } = await start('google');
    const back = await followAuthorize(authorizeUrl);
    w.t.clock.advance(31 * 60);
    try {
      const res = await deliver(w, back);
      assert.equal(res.statusCode, 400);
    } finally {
      w.t.clock.advance(-31 * 60);
    }
  });

  it('an ID token with the wrong nonce goes back to the sign-in page with invalid_id_token', async () => {
    const { id, authorizeUrl } = await start('google');
    w.mock.realms.get('google')!.nextIdToken = { nonce: 'not-the-nonce-we-sent' };
    const res = await deliver(w, await followAuthorize(authorizeUrl));
    assert.equal(res.statusCode, 302);
    assert.equal(signinError(res, id), 'invalid_id_token');
    assert.ok(!res.cookies.some((c) => c.name.startsWith('gh_session_')));
    const links = await w.t.ctx.db.selectFrom('oauth_links').selectAll().execute();
    assert.equal(links.length, 1, 'only the replay test sign-in linked an account');
  });

  it('an ID token for another audience is refused', async () => {
    const { id, authorizeUrl } = await start('google');
    w.mock.realms.get('google')!.nextIdToken = { aud: 'someone-else' };
    const res = await deliver(w, await followAuthorize(authorizeUrl));
    assert.equal(signinError(res, id), 'invalid_id_token');
  });

  it('an ID token from another issuer, expired, or signed with a key outside the JWKS is refused', async () => {
    for (const tamper of [
      () => {
        w.mock.realms.get('microsoft')!.nextIdToken = { iss: 'https://evil.example.com' };
      },
      () => {
        w.mock.realms.get('microsoft')!.nextIdToken = {
          exp: w.t.clock.nowSec() - 60,
          iat: w.t.clock.nowSec() - 700,
        };
      },
      () => {
        w.mock.realms.get('microsoft')!.nextSignedByStranger = true;
      },
    ]) {
      const { id, authorizeUrl } = await start('microsoft');
      tamper();
      const res = await deliver(w, await followAuthorize(authorizeUrl));
      assert.equal(signinError(res, id), 'invalid_id_token');
    }
  });

  it('a provider error and a cancel return to the sign-in page, which still works', async () => {
    const a = await start('discord');
    w.mock.realms.get('discord')!.nextAuthorizeError = 'server_error';
    const err = await deliver(w, await followAuthorize(a.authorizeUrl));
    assert.equal(signinError(err, a.id), 'provider_error');

    const b = await start('discord');
    w.mock.realms.get('discord')!.nextAuthorizeError = 'access_denied';
    const cancel = await deliver(w, await followAuthorize(b.authorizeUrl));
    assert.equal(signinError(cancel, b.id), 'cancelled');
    // The interaction is still live: the user picks again.
    const page = await w.inject({ method: 'GET', url: `/signin/${b.id}?error=cancelled` });
    assert.equal(page.statusCode, 200);
    assert.match(
      page.body,
      /<p class="status error" id="status" role="status" aria-live="polite">Sign-in was cancelled\. Choose a way to continue\.<\/p>/,
    );
    const unknown = await w.inject({ method: 'GET', url: `/signin/${b.id}?error=%3Cscript%3E` });
    assert.match(unknown.body, /<p class="status" id="status" role="status" aria-live="polite"><\/p>/);
    const again = await providerSignIn(w, b.id, 'discord');
    assert.equal(again.res.statusCode, 302);
    assert.ok(new URL(again.res.headers.location as string).searchParams.get('code'));
  });

  it('a token endpoint failure and a user-info failure return with their reasons, never a 500', async () => {
    const a = await start('x');
    w.mock.realms.get('x')!.nextTokenError = 'invalid_grant';
    const res = await deliver(w, await followAuthorize(a.authorizeUrl));
    assert.equal(res.statusCode, 302);
    assert.equal(signinError(res, a.id), 'token_exchange_failed');

    const b = await start('facebook');
    const saved = w.mock.realms.get('facebook')!.profile;
    w.mock.realms.get('facebook')!.profile = { name: 'no id here' };
    try {
      const r = await deliver(w, await followAuthorize(b.authorizeUrl));
      assert.equal(signinError(r, b.id), 'profile_unavailable');
    } finally {
      w.mock.realms.get('facebook')!.profile = saved;
    }
  });

  it('a provider that is unreachable is a token_exchange_failed, not a 500', async () => {
    const { id, authorizeUrl } = await start('google');
    const back = await followAuthorize(authorizeUrl);
    const tokenUrl = w.t.ctx.config.providers.google.tokenUrl;
    w.t.ctx.config.providers.google.tokenUrl = 'http://127.0.0.1:9/token';
    try {
      const res = await deliver(w, back);
      assert.equal(signinError(res, id), 'token_exchange_failed');
    } finally {
      w.t.ctx.config.providers.google.tokenUrl = tokenUrl;
    }
  });

  it('microsoft: the tenant placeholder takes the token tid; a configured issuer is exact', () => {
    const endpoints = {
      authorizationUrl: '',
      tokenUrl: '',
      issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
    };
    const tid = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    assert.equal(
      microsoft.expectedIssuer!(endpoints, { tid }, false),
      `https://login.microsoftonline.com/${tid}/v2.0`,
    );
    // No usable tid: the template itself, which no token carries.
    assert.equal(microsoft.expectedIssuer!(endpoints, { tid: '../evil' }, false), endpoints.issuer);
    assert.equal(
      microsoft.expectedIssuer!({ ...endpoints, issuer: 'http://mock/ms' }, { tid }, true),
      'http://mock/ms',
    );
  });

  it('logs the failures by reason, with no provider secret, token, code or state in any line', async () => {
    const { authorizeUrl } = await start('google');
    const back = await followAuthorize(authorizeUrl);
    await deliver(w, back);
    const text = logLines.join('');
    assert.match(text, /upstream sign-in failed/);
    assert.match(text, /"reason":"invalid_id_token"/);
    const secrets = [...new Set(w.mock.issued)].filter((s) => s.length >= 8);
    for (const code of w.mock.codes.keys()) secrets.push(code);
    for (const r of w.mock.authorizeRequests)
      secrets.push(r.query.get('state')!, r.query.get('nonce') ?? 'no-nonce-here');
    for (const s of secrets) assert.ok(!text.includes(s), `a secret reached the log: ${s.slice(0, 12)}…`);
  });

  it('google: both documented issuer forms by default, only the configured one when overridden', () => {
    const endpoints = { authorizationUrl: '', tokenUrl: '', issuer: 'https://accounts.google.com' };
    assert.equal(
      google.expectedIssuer!(endpoints, { iss: 'accounts.google.com' }, false),
      'accounts.google.com',
    );
    assert.equal(
      google.expectedIssuer!(endpoints, { iss: 'https://evil.example' }, false),
      'https://accounts.google.com',
    );
    assert.equal(
      google.expectedIssuer!({ ...endpoints, issuer: 'http://mock' }, { iss: 'accounts.google.com' }, true),
      'http://mock',
    );
  });

  describe('telegram', () => {
    function fields(overrides: Record<string, string> = {}, botToken = BOT_TOKEN) {
      const f: Record<string, string> = {
        id: '7001',
        first_name: 'Pavel',
        last_name: 'D',
        username: 'paveld',
        photo_url: 'https://t.me/i/userpic/320/paveld.jpg',
        auth_date: String(w.t.clock.nowSec() - 30),
        ...overrides,
      };
      f.hash = telegramHash(f, botToken);
      return f;
    }

    async function startTelegram(c = client) {
      const id = await startInteraction(w, c);
      const res = await w.inject({
        method: 'GET',
        url: `/interactions/${id}/providers/telegram`,
        remoteAddress: randomIp(),
      });
      assert.equal(res.statusCode, 200);
      return { id, res, jar: collectCookies(res, { ...w.browser }) };
    }

    async function callback(jar: Record<string, string>, f: Record<string, string>, c = client) {
      const cb = await w.t.ctx.db
        .selectFrom('brands')
        .select('oauth_callback_id')
        .where('id', '=', c.brandId)
        .executeTakeFirstOrThrow();
      return w.inject({
        method: 'GET',
        url: `/oauth/telegram/${cb.oauth_callback_id}/callback?${new URLSearchParams(f)}`,
        headers: { cookie: cookieHeader(jar) },
      });
    }

    it('serves the Login Widget page bound to the browser by a short-lived cookie', async () => {
      const { res } = await startTelegram();
      assert.match(res.headers['content-type'] as string, /text\/html/);
      assert.match(res.body, /src="https:\/\/telegram\.org\/js\/telegram-widget\.js\?22"/);
      assert.match(res.body, new RegExp(`data-telegram-login="${BOT_USERNAME}"`));
      assert.match(
        res.body,
        /data-auth-url="http:\/\/gatehouse\.test\/oauth\/telegram\/[A-Za-z0-9]+\/callback"/,
      );
      assert.match(res.headers['content-security-policy'] as string, /script-src https:\/\/telegram\.org/);
      const cookie = res.cookies.find((c) => c.name === 'gh_tg_binding');
      assert.ok(cookie);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.maxAge, 600);
      assert.equal(cookie.path, '/oauth/telegram/');
      assert.ok(!res.body.includes(BOT_TOKEN));
    });

    it('a valid hash signs in and creates the user from the widget fields', async () => {
      const { jar } = await startTelegram();
      const res = await callback(jar, fields());
      assert.equal(res.statusCode, 302, res.body);
      assert.ok(new URL(res.headers.location as string).searchParams.get('code'));
      const link = await w.t.ctx.db
        .selectFrom('oauth_links')
        .selectAll()
        .where('provider', '=', 'telegram')
        .executeTakeFirstOrThrow();
      assert.equal(link.external_user_id, '123456789:7001', 'keyed by the bot that proved it');
      assert.equal(link.username, 'paveld');
      const user = await w.t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', link.user_id)
        .executeTakeFirstOrThrow();
      assert.equal(user.username, 'paveld');
      assert.equal(user.first_name, 'Pavel');
      // The binding is single use.
      const again = await callback(jar, fields());
      assert.equal(again.statusCode, 400);
    });

    it('a tampered hash is refused and recorded against the account it named', async () => {
      const { id, jar } = await startTelegram();
      const f = fields();
      f.username = 'someoneelse';
      const res = await callback(jar, f);
      assert.equal(signinError(res, id), 'telegram_invalid');
      const link = await w.t.ctx.db
        .selectFrom('oauth_links')
        .select('user_id')
        .where('provider', '=', 'telegram')
        .executeTakeFirstOrThrow();
      const activity = await activityOf(link.user_id);
      assert.deepEqual(
        activity.filter((a) => a.type === 'sign_in_failed'),
        [{ type: 'sign_in_failed', provider: 'telegram' }],
      );
    });

    it('data older than a day is refused', async () => {
      const { id, jar } = await startTelegram();
      const res = await callback(jar, fields({ auth_date: String(w.t.clock.nowSec() - 86401) }));
      assert.equal(signinError(res, id), 'telegram_expired');
    });

    /** Another org whose brand signs in with a bot its owner controls: any id, signed with its token. */
    const OTHER_BOT = '987654321:AAOtherOrgsOwnBotTokenForTests_987654';
    async function otherOrgsBrand(botToken = OTHER_BOT) {
      const owner = await createUser(w.t);
      const org = await seedOrg(w.t, owner);
      const other = await seedClient(w.t, {
        orgId: org.id,
        firstParty: true,
        redirectUris: [`${w.mock.url}/app/callback`],
      });
      const put = await w.inject({
        method: 'PUT',
        url: `/identity/organizations/${org.slug}/brands/${other.brandSlug}/connections`,
        headers: { authorization: `Bearer ${await consoleToken(w.t, owner.id)}` },
        payload: { type: 'telegram', config: { botToken, botUsername: 'other_org_bot' } },
      });
      assert.equal(put.statusCode, 201, put.body);
      return other;
    }

    async function telegramLinks(telegramId: string) {
      return w.t.ctx.db
        .selectFrom('oauth_links')
        .select(['user_id', 'external_user_id', 'brand_id'])
        .where('provider', '=', 'telegram')
        .where('external_user_id', 'like', `%${telegramId}`)
        .orderBy('external_user_id')
        .execute();
    }

    async function signInAs(telegramId: string, c: SeededClient, botToken: string) {
      const { jar } = await startTelegram(c);
      const res = await callback(jar, fields({ id: telegramId }, botToken), c);
      assert.equal(res.statusCode, 302, res.body);
      assert.ok(new URL(res.headers.location as string).searchParams.get('code'));
    }

    it("an id signed by another org's bot never reaches the account its owner linked through this one", async () => {
      await signInAs('7002', client, BOT_TOKEN);
      const [victim] = await telegramLinks('7002');
      assert.equal(victim.external_user_id, '123456789:7002', "the operator's bot: its bot id");
      // Another org signs "7002" with its own bot's token (a valid proof, for that bot), then with a
      // token of its own making that names the operator's bot id (bot ids are public).
      const other = await otherOrgsBrand();
      await signInAs('7002', other, OTHER_BOT);
      const copycat = await otherOrgsBrand(`123456789:${'A'.repeat(35)}`);
      await signInAs('7002', copycat, `123456789:${'A'.repeat(35)}`);
      const links = await telegramLinks('7002');
      assert.deepEqual(
        links.map((l) => l.external_user_id).sort(),
        ['123456789:7002', `${other.brandId}:7002`, `${copycat.brandId}:7002`].sort(),
        "a brand's own connection proves only for that brand",
      );
      const ours = links.find((l) => l.external_user_id === '123456789:7002');
      assert.deepEqual(ours, victim, "the victim's link is untouched");
      assert.equal(new Set(links.map((l) => l.user_id)).size, 3, 'two new accounts, not the victim');
    });

    it('a link from before links were keyed by bot is taken over only through the brand it was used through', async () => {
      const holder = await createUser(w.t);
      const now = w.t.clock.now();
      await w.t.ctx.db
        .insertInto('oauth_links')
        .values({
          id: 'oal_legacy7003',
          user_id: holder.id,
          provider: 'telegram',
          external_user_id: '7003',
          brand_id: client.brandId,
          created_at: now,
          updated_at: now,
        } as never)
        .execute();
      const other = await otherOrgsBrand();
      await signInAs('7003', other, OTHER_BOT);
      let links = await telegramLinks('7003');
      assert.deepEqual(
        links.map((l) => [l.external_user_id, l.user_id === holder.id]).sort(),
        [
          ['7003', true],
          [`${other.brandId}:7003`, false],
        ].sort(),
        "another org's bot does not take the legacy link over",
      );
      await signInAs('7003', client, BOT_TOKEN);
      links = await telegramLinks('7003');
      assert.deepEqual(
        links.map((l) => [l.external_user_id, l.user_id === holder.id]).sort(),
        [
          ['123456789:7003', true],
          [`${other.brandId}:7003`, false],
        ].sort(),
        'the brand it was used through keeps its user, now keyed by the bot',
      );
    });

    it('without the binding cookie the return is refused', async () => {
      await startTelegram();
      const res = await callback({}, fields());
      assert.equal(res.statusCode, 400);
    });

    it('verifies in constant time over the sorted data-check string', () => {
      const now = 1_700_000_000;
      const f = { id: '1', auth_date: String(now), first_name: 'A' } as Record<string, string>;
      f.hash = telegramHash(f, BOT_TOKEN);
      assert.equal(verifyTelegramLogin(f, BOT_TOKEN, now).ok, true);
      assert.equal(verifyTelegramLogin(f, `${BOT_TOKEN}x`, now).ok, false);
      assert.deepEqual(verifyTelegramLogin({ ...f, hash: 'zz' }, BOT_TOKEN, now), {
        ok: false,
        reason: 'invalid_hash',
        claimedId: '123456789:1',
      });
      assert.equal(verifyTelegramLogin(f, BOT_TOKEN, now + 86_401).ok, false);
      assert.equal(verifyTelegramLogin(f, BOT_TOKEN, now - 3600).ok, false, 'auth_date in the future');
    });
  });
});
