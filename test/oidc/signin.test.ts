import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { decodeJwt } from 'jose';
import { defaults } from '../../src/config/defaults.js';
import { loadClient } from '../../src/oidc/clients.js';
import { newAuthorizationCode } from '../../src/oidc/codes.js';
import { identityHash } from '../../src/oidc/signin/identities.js';
import { newSession } from '../../src/oidc/signin/sessions.js';
import type { SigninStores } from '../../src/oidc/signin/stores.js';
import { sha256 } from '../../src/lib/hash.js';
import { type TestApp, buildTestApp, userChangedBehindTheApp } from '../helpers/app.js';
import { OTHER_BROWSER } from '../helpers/browser-binding.js';
import {
  type SeededClient,
  authorizeQuery,
  collectCookies,
  cookieHeader,
  pkce,
  seedClient,
  walletSignIn,
} from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;
let rp: SeededClient;
let other: SeededClient;

const BASE = 'http://gatehouse.test';

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  rp = await seedClient(t, {
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders:read'],
    brand: { name: 'Acme <Shop>', providerOrder: ['google', 'solana', 'discord'] },
  });
  other = await seedClient(t);
  const now = t.clock.now();
  await sql`insert into brand_scopes (id, org_id, brand_id, name, description, created_at, updated_at)
    values ('bs_1', ${rp.orgId}, ${rp.brandId}, 'orders:read', 'Read your orders', ${now}, ${now})`.execute(
    t.ctx.db,
  );
  await sql`insert into connections (id, org_id, brand_id, type, enabled, config_enc, created_at, updated_at)
    values ('cn_1', ${rp.orgId}, ${rp.brandId}, 'google', true, 'x', ${now}, ${now}),
           ('cn_2', ${rp.orgId}, ${rp.brandId}, 'discord', false, 'x', ${now}, ${now})`.execute(t.ctx.db);
});
after(() => t.close());

/** Starts an authorize request and returns the interaction id it redirected to. */
async function startInteraction(
  client: SeededClient,
  overrides: Record<string, string | null> = {},
  jar: Record<string, string> = {},
  challenge?: string,
) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(client, overrides, challenge)}`,
    headers: { cookie: cookieHeader(jar) },
  });
  assert.equal(res.statusCode, 302, res.body);
  const location = res.headers.location as string;
  const m = location.match(/^http:\/\/gatehouse\.test\/signin\/([A-Za-z0-9]+)$/);
  return { id: m?.[1], location };
}

async function consent(id: string, decision: 'allow' | 'deny', jar: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: `/interactions/${id}/consent`,
    payload: { decision },
    headers: { cookie: cookieHeader(jar) },
  });
}

async function eventsOf(type: string) {
  return t.ctx.db.selectFrom('events').selectAll().where('type', '=', type).orderBy('created_at').execute();
}

describe('headless sign-in: the whole authorization code flow', () => {
  it('authorize → interaction → challenge → verify → consent → code that the token endpoint redeems', async () => {
    const wallet = createTestWallet();
    const { verifier, challenge } = pkce();
    const { id } = await startInteraction(
      rp,
      { state: 'state-1', nonce: 'nonce-1', scope: 'openid profile orders:read' },
      {},
      challenge,
    );
    assert.ok(id);

    const view = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.equal(view.statusCode, 200);
    const v = view.json();
    assert.equal(v.id, id);
    assert.equal(v.step, 'signin');
    assert.deepEqual(v.brand, {
      slug: rp.brandSlug,
      name: 'Acme <Shop>',
      primaryColor: '#1a73e8',
      privacyPolicyUrl: 'https://example.com/privacy',
      termsUrl: 'https://example.com/terms',
    });
    assert.deepEqual(v.app, { clientId: rp.clientId, name: `App ${rp.clientId}` });
    assert.deepEqual(
      v.scopes.map((s: { name: string }) => s.name),
      ['openid', 'profile', 'orders:read'],
    );
    assert.equal(v.scopes[2].description, 'Read your orders');
    // providerOrder places google before the wallet; discord's connection is disabled.
    assert.deepEqual(v.providers, ['google', 'solana']);
    assert.equal(v.expiresAt, new Date(t.clock.nowMs() + defaults.interactionTtl * 1000).toISOString());

    const { res, jar } = await walletSignIn(t, id, wallet);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { step: 'consent' });
    const cookie = res.cookies.find((c) => c.name === `gh_session_${rp.brandId}`);
    assert.ok(cookie, 'the session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.notEqual(cookie.secure, true, 'not Secure on an http BASE_URL');
    const session = await t.ctx.db
      .selectFrom('sessions')
      .selectAll()
      .where('brand_id', '=', rp.brandId)
      .executeTakeFirstOrThrow();
    assert.notEqual(session.token_hash, cookie.value, 'only a hash of the cookie is stored');

    const afterSignIn = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.equal(afterSignIn.json().step, 'consent');

    const c = await consent(id, 'allow', jar);
    assert.equal(c.statusCode, 200, c.body);
    const redirect = new URL(c.json().redirectTo);
    assert.equal(`${redirect.origin}${redirect.pathname}`, rp.redirectUri);
    assert.equal(redirect.searchParams.get('state'), 'state-1');
    assert.equal(redirect.searchParams.get('iss'), BASE);
    const code = redirect.searchParams.get('code');
    assert.ok(code);

    const user = await t.ctx.db
      .selectFrom('user_public_keys')
      .select(['user_id', 'is_primary'])
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    assert.equal(user.is_primary, true);
    const activity = await t.ctx.db
      .selectFrom('activity')
      .selectAll()
      .where('user_id', '=', user.user_id)
      .execute();
    assert.deepEqual(
      activity.map((a) => [a.type, a.provider]),
      [['sign_in', 'solana']],
    );
    const granted = (await eventsOf('consent.granted')).at(-1);
    assert.deepEqual(granted?.data, {
      user: user.user_id,
      app: rp.clientId,
      scopes: ['openid', 'profile', 'orders:read'],
    });
    assert.equal(granted?.org_id, rp.orgId);

    const tokenRes = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: rp.redirectUri,
        client_id: rp.clientId,
        code_verifier: verifier,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(tokenRes.statusCode, 200, tokenRes.body);
    const idToken = decodeJwt(tokenRes.json().id_token);
    assert.equal(idToken.sub, user.user_id);
    assert.equal(idToken.nonce, 'nonce-1');
    assert.equal(idToken.aud, rp.clientId);

    // The interaction is single use.
    assert.equal((await consent(id, 'allow', jar)).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'GET', url: `/interactions/${id}` })).statusCode, 404);
  });

  it('with a session and consent, authorize answers straight to the redirect URI with a code', async () => {
    const wallet = createTestWallet();
    const first = await startInteraction(rp);
    const { jar } = await walletSignIn(t, first.id!, wallet);
    assert.equal((await consent(first.id!, 'allow', jar)).statusCode, 200);

    const res = await t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${authorizeQuery(rp, { state: 'again' })}`,
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(res.statusCode, 302);
    const loc = new URL(res.headers.location as string);
    assert.equal(`${loc.origin}${loc.pathname}`, rp.redirectUri);
    assert.ok(loc.searchParams.get('code'));
    assert.equal(loc.searchParams.get('state'), 'again');
    assert.equal(loc.searchParams.get('iss'), BASE);

    // A second sign-in with the same wallet lands on the same account and skips covered consent.
    const again = await startInteraction(rp);
    const second = await walletSignIn(t, again.id!, wallet);
    assert.equal(second.res.json().step, 'done');
    assert.match(second.res.json().redirectTo, /[?&]code=/);
    const keys = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .execute();
    assert.equal(keys.length, 1);
  });

  it('asks consent again for a new scope and fires consent.granted with only that scope', async () => {
    const wallet = createTestWallet();
    const first = await startInteraction(rp, { scope: 'openid' });
    const { jar } = await walletSignIn(t, first.id!, wallet);
    await consent(first.id!, 'allow', jar);
    const before = (await eventsOf('consent.granted')).length;

    const res = await t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${authorizeQuery(rp, { scope: 'openid email' })}`,
      headers: { cookie: cookieHeader(jar) },
    });
    const id = (res.headers.location as string).split('/signin/')[1];
    assert.ok(id, 'goes to the hosted page for consent');
    const view = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.equal(view.json().step, 'consent');
    assert.equal((await consent(id, 'allow', jar)).statusCode, 200);
    const events = await eventsOf('consent.granted');
    assert.equal(events.length, before + 1);
    const last = events[events.length - 1].data as { user: string; scopes: string[] };
    assert.deepEqual(last.scopes, ['email']);
    const grant = await t.ctx.db
      .selectFrom('consent_grants')
      .selectAll()
      .where('client_id', '=', rp.clientId)
      .where('user_id', '=', last.user)
      .executeTakeFirstOrThrow();
    assert.deepEqual(grant.scopes.sort(), ['email', 'openid']);
  });

  it('deny redirects with access_denied, state and iss, and records no grant', async () => {
    const wallet = createTestWallet();
    const { id } = await startInteraction(rp, { state: 'deny-state' });
    const { jar } = await walletSignIn(t, id!, wallet);
    const res = await consent(id!, 'deny', jar);
    assert.equal(res.statusCode, 200);
    const loc = new URL(res.json().redirectTo);
    assert.equal(loc.searchParams.get('error'), 'access_denied');
    assert.equal(loc.searchParams.get('state'), 'deny-state');
    assert.equal(loc.searchParams.get('iss'), BASE);
    assert.equal(loc.searchParams.get('code'), null);
  });

  it('skips consent for a first-party app', async () => {
    const fp = await seedClient(t, { firstParty: true });
    const { id } = await startInteraction(fp);
    const { res } = await walletSignIn(t, id!, createTestWallet());
    assert.equal(res.json().step, 'done');
    assert.match(res.json().redirectTo, /^https:\/\/app\.example\.com\/callback\?code=/);
  });

  it('a returning wallet on a first-party app: one sign-in statement marks it used, its user seen, the history', async () => {
    const fp = await seedClient(t, { firstParty: true });
    const wallet = createTestWallet();
    await walletSignIn(t, (await startInteraction(fp)).id!, wallet);
    t.clock.advance(120);
    const { res } = await walletSignIn(t, (await startInteraction(fp)).id!, wallet);
    assert.equal(res.json().step, 'done');
    const code = new URL(res.json().redirectTo).searchParams.get('code');
    assert.ok(code);
    const now = t.clock.now().getTime();
    const key = await t.ctx.db
      .selectFrom('user_public_keys')
      .select(['user_id', 'last_used_at'])
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    const user = await t.ctx.db
      .selectFrom('users')
      .select('last_seen')
      .where('id', '=', key.user_id)
      .executeTakeFirstOrThrow();
    assert.equal(key.last_used_at?.getTime(), now);
    assert.equal(user.last_seen?.getTime(), now);
    const sessions = await t.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', key.user_id)
      .execute();
    assert.equal(sessions.length, 2, 'each browser its own session');
    const activity = await t.ctx.db
      .selectFrom('activity')
      .select('type')
      .where('user_id', '=', key.user_id)
      .execute();
    assert.deepEqual(
      activity.map((a) => a.type),
      ['sign_in', 'sign_in'],
    );
  });

  it("the sign-in's one statement writes nothing that stays when the interaction ended meanwhile", async () => {
    const fp = await seedClient(t, { firstParty: true });
    const { id } = await startInteraction(fp);
    const wallet = createTestWallet();
    await walletSignIn(t, (await startInteraction(fp)).id!, wallet);
    const { user_id: userId } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    await t.ctx.db
      .updateTable('interactions')
      .set({ completed_at: t.clock.now() })
      .where('id', '=', id!)
      .execute();
    const now = t.clock.now();
    const session = newSession(t.clock, { brandId: fp.brandId, authTime: now });
    const client = await loadClient(t.ctx, fp.clientId);
    assert.ok(client);
    const finish = (tx: SigninStores) =>
      tx.finishSignIn({
        session: { ...session.row, userId },
        interactionId: id!,
        code: newAuthorizationCode(t.ctx, {
          client,
          userId,
          redirectUri: 'https://app.example.com/callback',
          scopes: ['openid'],
          authTime: Math.floor(now.getTime() / 1000),
          sessionId: session.id,
        }).row,
        activity: { userId, type: 'sign_in', provider: 'solana' },
        now,
      });
    await assert.rejects(finish(t.ctx.stores.signin), /runs in a transaction/);
    const undone = new Error('undone');
    await assert.rejects(
      t.ctx.stores.signin.atomic(async (tx) => {
        assert.equal(await finish(tx), false, 'the interaction was not live');
        throw undone;
      }),
      undone,
    );
    const left = await t.ctx.db.selectFrom('sessions').select('id').where('id', '=', session.id).execute();
    assert.deepEqual(left, []);
    const history = await t.ctx.db
      .selectFrom('activity')
      .select('type')
      .where('user_id', '=', userId)
      .execute();
    assert.equal(history.length, 1, 'only the first sign-in');
  });

  it('a session of one brand does not sign in to another brand', async () => {
    const wallet = createTestWallet();
    const first = await startInteraction(rp);
    const { jar } = await walletSignIn(t, first.id!, wallet);
    const res = await t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${authorizeQuery(other, { prompt: 'none', state: 's' })}`,
      headers: { cookie: cookieHeader(jar) },
    });
    const loc = new URL(res.headers.location as string);
    assert.equal(loc.searchParams.get('error'), 'login_required');
  });

  it('restores an account in its deletion grace window when its wallet signs in', async () => {
    const wallet = createTestWallet();
    const first = await startInteraction(other);
    const { res } = await walletSignIn(t, first.id!, wallet);
    assert.equal(res.statusCode, 200);
    const { user_id: userId } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    // What account deletion leaves behind: no wallet rows, a hash of the identity, deleted_at set.
    await t.ctx.db.deleteFrom('user_public_keys').where('user_id', '=', userId).execute();
    await t.ctx.db.updateTable('users').set({ deleted_at: t.clock.now() }).where('id', '=', userId).execute();
    await userChangedBehindTheApp(t, userId);
    await sql`insert into deleted_identities (identity_hash, user_id, deleted_at)
      values (${identityHash({ kind: 'wallet', address: wallet.address })}, ${userId}, ${t.clock.now()})`.execute(
      t.ctx.db,
    );
    t.clock.advance(24 * 3600);

    const again = await startInteraction(other);
    assert.equal((await walletSignIn(t, again.id!, wallet)).res.statusCode, 200);
    const user = await t.ctx.db
      .selectFrom('users')
      .select(['deleted_at'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    assert.equal(user.deleted_at, null);
    const key = await t.ctx.db
      .selectFrom('user_public_keys')
      .select(['user_id', 'is_primary'])
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    assert.deepEqual(key, { user_id: userId, is_primary: true });
  });
});

describe('headless sign-in: wallet errors through the API', () => {
  async function challenge(id: string, address: string) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: { address },
    });
    return res;
  }
  async function verify(id: string, body: Record<string, string>) {
    return t.app.inject({ method: 'POST', url: `/interactions/${id}/wallet/verify`, payload: body });
  }

  it('answers the challenge with the message and its expiry', async () => {
    const { id } = await startInteraction(rp);
    const w = createTestWallet();
    const res = await challenge(id!, w.address);
    assert.equal(res.statusCode, 200);
    assert.match(
      res.json().message,
      new RegExp(
        `^gatehouse\\.test wants you to sign in with your Solana account:\\n${w.address}\\n\\nSign in to Acme <Shop>\\n`,
      ),
    );
    assert.equal(res.json().expiresAt, new Date(t.clock.nowMs() + 300_000).toISOString());
  });

  it('refuses a bad address (400 validation_failed) and an unknown interaction (404)', async () => {
    const { id } = await startInteraction(rp);
    const bad = await challenge(id!, '0OIl-not-base58');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'validation_failed');
    const missing = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: {},
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.details.fields[0].field, 'address');
    const unknown = await challenge('doesnotexist', createTestWallet().address);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, 'not_found');
  });

  it('answers wrong_brand for a challenge issued on another brand’s interaction', async () => {
    const w = createTestWallet();
    const a = await startInteraction(rp);
    const b = await startInteraction(other);
    const message = (await challenge(b.id!, w.address)).json().message;
    const res = await verify(a.id!, w.prove(message));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'wrong_brand');
  });

  it('answers stale_challenge after 5 minutes, replayed_nonce on reuse, bad_signature for forgeries', async () => {
    const w = createTestWallet();
    const { id } = await startInteraction(rp);
    const stale = (await challenge(id!, w.address)).json().message;
    t.clock.advance(301);
    const s = await verify(id!, w.prove(stale));
    assert.equal(s.statusCode, 400);
    assert.equal(s.json().error.code, 'stale_challenge');

    const { id: id2 } = await startInteraction(rp);
    const msg = (await challenge(id2!, w.address)).json().message;
    const forged = { ...w.prove(msg), signature: createTestWallet().signBytes(msg).toString('base64') };
    const f = await verify(id2!, forged);
    assert.equal(f.statusCode, 400);
    assert.equal(f.json().error.code, 'bad_signature');
    // The failed attempt burned the challenge: the right signature now meets replayed_nonce.
    const r = await verify(id2!, w.prove(msg));
    assert.equal(r.json().error.code, 'replayed_nonce');

    const msg3 = (await challenge(id2!, w.address)).json().message;
    const mismatch = await verify(id2!, { ...w.prove(msg3), address: createTestWallet().address });
    assert.equal(mismatch.json().error.code, 'bad_signature');
    const unknownMessage = await verify(id2!, w.prove(`${msg3}\n`));
    assert.equal(unknownMessage.json().error.code, 'bad_signature');

    // Another wallet's valid signature over the message, as its own: refused, and the challenge burnt.
    const msg4 = (await challenge(id2!, w.address)).json().message;
    const claimed = await verify(id2!, createTestWallet().prove(msg4));
    assert.equal(claimed.json().error.code, 'bad_signature');
    assert.equal((await verify(id2!, w.prove(msg4))).json().error.code, 'replayed_nonce');
  });

  it('records sign_in_failed for a known wallet whose proof fails', async () => {
    const w = createTestWallet();
    const first = await startInteraction(other);
    await walletSignIn(t, first.id!, w);
    const { user_id: userId } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', w.address)
      .executeTakeFirstOrThrow();
    const { id } = await startInteraction(other);
    const msg = (await challenge(id!, w.address)).json().message;
    const res = await verify(id!, {
      ...w.prove(msg),
      signature: createTestWallet().signBytes(msg).toString('base64'),
    });
    assert.equal(res.json().error.code, 'bad_signature');
    const types = (
      await t.ctx.db
        .selectFrom('activity')
        .select('type')
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute()
    ).map((a) => a.type);
    assert.deepEqual(types, ['sign_in', 'sign_in_failed']);
  });
});

describe('headless sign-in on several instances (each keeps the interactions it started)', () => {
  let t2: TestApp;
  before(async () => {
    t2 = await buildTestApp({ shareWith: t, env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  });
  after(() => t2.close());

  const post = (app: TestApp, url: string, cookie: string, payload: Record<string, string>) =>
    app.app.inject({ method: 'POST', url, headers: { cookie }, payload });

  /** A first-party app's interaction started on `t`, and its browser's binding cookie. */
  async function startOnThisInstance() {
    const fp = await seedClient(t, { firstParty: true });
    const start = await t.app.inject({ method: 'GET', url: `/oauth2/authorize?${authorizeQuery(fp)}` });
    const id = /\/signin\/([A-Za-z0-9]+)$/.exec(start.headers.location as string)?.[1];
    const binding = start.cookies.find((c) => c.name === `gh_ia_${id}`);
    assert.ok(id && binding);
    return { id, cookie: `${binding.name}=${binding.value}` };
  }

  it('an interaction completed on another instance takes no challenge and no sign-in here, and burns nothing', async () => {
    const { id, cookie } = await startOnThisInstance();
    const wallet = createTestWallet();
    const challengeUrl = `/interactions/${id}/wallet/challenge`;
    const verifyUrl = `/interactions/${id}/wallet/verify`;
    // This instance started the interaction and issues a challenge in it …
    const early = await post(t, challengeUrl, cookie, { address: wallet.address });
    assert.equal(early.statusCode, 200, early.body);
    // … then the browser signs in through the other instance, which completes it.
    const there = await post(t2, challengeUrl, cookie, { address: wallet.address });
    assert.equal(there.statusCode, 200, there.body);
    const done = await post(t2, verifyUrl, cookie, wallet.prove(there.json().message));
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().step, 'done');
    // In this instance's memory the interaction is as it started; its writes find it completed.
    const late = await post(t, challengeUrl, cookie, { address: wallet.address });
    assert.equal(late.statusCode, 404, late.body);
    assert.equal(late.json().error.code, 'not_found');
    const again = await post(t, verifyUrl, cookie, wallet.prove(early.json().message));
    assert.equal(again.statusCode, 404, again.body);
    // The sign-in was undone whole: the early challenge is still unused, no second session exists.
    const challenge = await t.ctx.db
      .selectFrom('wallet_challenges')
      .select('consumed_at')
      .where('message_hash', '=', sha256(Buffer.from(early.json().message, 'utf8')))
      .executeTakeFirstOrThrow();
    assert.equal(challenge.consumed_at, null);
    const { user_id: userId } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    const sessions = await t.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', userId)
      .execute();
    assert.equal(sessions.length, 1);
  });

  it('an interaction started on one instance is continued on another, which reads it', async () => {
    const { id, cookie } = await startOnThisInstance();
    const wallet = createTestWallet();
    const ch = await post(t2, `/interactions/${id}/wallet/challenge`, cookie, { address: wallet.address });
    assert.equal(ch.statusCode, 200, ch.body);
    // Without the binding cookie the other instance refuses it too (it checks the row it read).
    const stranger = await t2.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      headers: { [OTHER_BROWSER]: '1' },
      payload: { address: wallet.address },
    });
    assert.equal(stranger.statusCode, 403);
    const done = await post(t, `/interactions/${id}/wallet/verify`, cookie, wallet.prove(ch.json().message));
    assert.equal(done.statusCode, 200, done.body);
    assert.match(done.json().redirectTo, /^https:\/\/app\.example\.com\/callback\?code=/);
  });
});

describe('headless sign-in: request hygiene', () => {
  it('refuses a cross-origin Origin (403) and accepts our own origin', async () => {
    const { id } = await startInteraction(rp);
    const w = createTestWallet();
    const evil = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: { address: w.address },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(evil.statusCode, 403);
    assert.equal(evil.json().error.code, 'forbidden');
    const ours = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: { address: w.address },
      headers: { origin: BASE },
    });
    assert.equal(ours.statusCode, 200);
  });

  it('refuses a form-encoded body on the JSON API (415)', async () => {
    const { id } = await startInteraction(rp);
    const res = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: 'decision=allow',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 415);
  });

  it('refuses consent before sign-in (409), without the session cookie (401), and a bad decision (400)', async () => {
    const { id } = await startInteraction(rp);
    const early = await consent(id!, 'allow', {});
    assert.equal(early.statusCode, 409);
    await walletSignIn(t, id!, createTestWallet());
    const noCookie = await consent(id!, 'allow', {});
    assert.equal(noCookie.statusCode, 401);
    const bad = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'maybe' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'validation_failed');
  });

  it('expires interactions after interactionTtl', async () => {
    const { id } = await startInteraction(rp);
    t.clock.advance(defaults.interactionTtl + 1);
    const res = await t.app.inject({ method: 'GET', url: `/interactions/${id}` });
    assert.equal(res.statusCode, 404);
    const page = await t.app.inject({ method: 'GET', url: `/signin/${id}` });
    assert.equal(page.statusCode, 404);
    assert.match(page.headers['content-type'] as string, /text\/html/);
  });

  it('a new sign-in replaces the browser’s previous session of that brand', async () => {
    const w = createTestWallet();
    const first = await startInteraction(other);
    const { jar } = await walletSignIn(t, first.id!, w);
    const oldCookie = jar[`gh_session_${other.brandId}`];
    const second = await startInteraction(other, { prompt: 'login' }, jar);
    await walletSignIn(t, second.id!, w, jar);
    assert.notEqual(jar[`gh_session_${other.brandId}`], oldCookie);
    const res = await t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${authorizeQuery(other, { prompt: 'none' })}`,
      headers: { cookie: `gh_session_${other.brandId}=${oldCookie}` },
    });
    assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'login_required');
    collectCookies(res, jar);
  });
});

describe('hosted sign-in page', () => {
  it('is brand-themed, escaped, unframeable and runs only our nonce-bearing script files', async () => {
    const { id } = await startInteraction(rp);
    const res = await t.app.inject({ method: 'GET', url: `/signin/${id}` });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    const csp = res.headers['content-security-policy'] as string;
    assert.match(csp, /frame-ancestors 'none'/);
    const nonce = csp.match(/script-src 'nonce-([^']+)'/)?.[1];
    assert.ok(nonce);
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
    assert.ok(scripts.length >= 2);
    for (const attrs of scripts) {
      // Either a nonce-bearing file of ours, or inert JSON data: never inline code.
      assert.ok(
        new RegExp(
          `^ nonce="${nonce.replace(/[+/]/g, '\\$&')}" src="/static/[a-z]+\\.js\\?v=[0-9a-f]+" defer$`,
        ).test(attrs) || attrs === ' type="application/json" id="gh-data"',
        attrs,
      );
    }
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers['referrer-policy'], 'same-origin');
    const js = await t.app.inject({ method: 'GET', url: '/static/signin.js' });
    assert.equal(js.statusCode, 200);
    assert.match(js.headers['content-type'] as string, /^text\/javascript/);
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    assert.equal((await t.app.inject({ method: 'GET', url: '/static/nope.js' })).statusCode, 404);
    assert.ok(res.body.includes('Acme &lt;Shop&gt;'));
    assert.ok(!res.body.includes('Acme <Shop>'));
    assert.ok(res.body.includes('--brand: #1a73e8'));
    assert.ok(res.body.includes('href="https://example.com/privacy"'));
    assert.ok(res.body.includes('href="https://example.com/terms"'));
    assert.ok(res.body.indexOf('id="provider-google"') < res.body.indexOf('id="provider-solana"'));
    assert.ok(res.body.includes('Read your orders') === false, 'only the requested scopes are listed');
  });

  it('shows only the pre-selected provider', async () => {
    const { id } = await startInteraction(rp, { provider: 'solana' });
    const res = await t.app.inject({ method: 'GET', url: `/signin/${id}` });
    assert.ok(res.body.includes('id="provider-solana"'));
    assert.ok(!res.body.includes('id="provider-google"'));
  });
});
