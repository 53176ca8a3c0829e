import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordActivity } from '../../src/modules/users/activity.js';
import { oauthLinkTokens, upsertOAuthLink } from '../../src/stores/accounts.store.js';
import { type TestApp, type TestUser, buildTestApp, createUser, json } from '../helpers/app.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

function link(userId: string, provider: string, externalUserId: string, tokens = true) {
  return t.ctx.db.transaction().execute((trx) =>
    upsertOAuthLink(t.ctx, trx, {
      userId,
      provider,
      externalUserId,
      emailAddress: `${externalUserId}@example.com`,
      username: `${provider}-name`,
      accessToken: tokens ? `${provider}-access-plaintext` : null,
      refreshToken: tokens ? `${provider}-refresh-plaintext` : null,
    }),
  );
}

async function linkWallet(user: TestUser) {
  const wallet = createTestWallet();
  const ch = await t.app.inject({
    method: 'POST',
    url: '/users/me/wallet-challenge',
    headers: user.auth,
    payload: { address: wallet.address },
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/public-keys',
    headers: user.auth,
    payload: { blockchain: 'solana', ...wallet.prove(json(ch).message) },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

describe('GET /users/me/activity', () => {
  it('lists the last 5 events, newest first, with the optional fields only when known', async () => {
    const user = await createUser(t);
    const types = [
      'sign_in',
      'sign_in_failed',
      'link_provider',
      'sign_in',
      'device_authorized',
      'sign_in',
    ] as const;
    for (const [i, type] of types.entries()) {
      await recordActivity(t.ctx.db, t.clock, {
        userId: user.id,
        type,
        ...(i % 2 === 0 ? { provider: 'solana', ip: `10.0.0.${i}`, userAgent: `agent/${i}` } : {}),
      });
      t.clock.advance(1);
    }
    const res = await t.app.inject({ method: 'GET', url: '/users/me/activity', headers: user.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['ratelimit-limit'], '60');
    const { items } = json(res);
    assert.equal(items.length, 5);
    assert.deepEqual(
      items.map((i: { type: string }) => i.type),
      ['sign_in', 'device_authorized', 'sign_in', 'link_provider', 'sign_in_failed'],
    );
    assert.deepEqual(items[1], {
      timestamp: new Date(t.clock.nowMs() - 2000).toISOString(),
      type: 'device_authorized',
      provider: 'solana',
      ip: '10.0.0.4',
      userAgent: 'agent/4',
    });
    assert.deepEqual(Object.keys(items[0]).sort(), ['timestamp', 'type']);
  });

  it("shows nothing of another user's activity and needs authentication", async () => {
    const user = await createUser(t);
    assert.deepEqual(
      json(await t.app.inject({ method: 'GET', url: '/users/me/activity', headers: user.auth })),
      {
        items: [],
      },
    );
    assert.equal((await t.app.inject({ method: 'GET', url: '/users/me/activity' })).statusCode, 401);
  });
});

describe('linked OAuth accounts', () => {
  it('lists providers and token records without any token; stores tokens only encrypted', async () => {
    const user = await createUser(t);
    const key = await linkWallet(user);
    const linkId = await link(user.id, 'google', 'g-123');

    const providers = json(
      await t.app.inject({ method: 'GET', url: '/users/me/authentication-providers', headers: user.auth }),
    );
    assert.deepEqual(providers, [
      {
        type: 'oauth',
        id: linkId,
        provider: 'google',
        externalUserId: 'g-123',
        emailAddress: 'g-123@example.com',
        username: 'google-name',
      },
      { type: 'publicKey', id: key.id, blockchain: 'solana', address: key.address, isPrimary: true },
    ]);

    const res = await t.app.inject({ method: 'GET', url: '/users/me/oauth-tokens', headers: user.auth });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), [
      {
        id: linkId,
        provider: 'google',
        emailAddress: 'g-123@example.com',
        username: 'google-name',
        lastUsedAt: t.clock.now().toISOString(),
        createdAt: t.clock.now().toISOString(),
      },
    ]);
    assert.ok(!res.body.includes('plaintext'));

    const rows = await t.ctx.db.selectFrom('oauth_links').selectAll().execute();
    assert.ok(!JSON.stringify(rows).includes('plaintext'), 'no provider token in clear at rest');
    assert.deepEqual(await oauthLinkTokens(t.ctx, linkId), {
      accessToken: 'google-access-plaintext',
      refreshToken: 'google-refresh-plaintext',
    });
  });

  it('refuses to link a provider account already linked to another user (409)', async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    await link(a.id, 'x', 'x-1', false);
    await assert.rejects(link(b.id, 'x', 'x-1', false), (e: { status?: number; code?: string }) => {
      assert.equal(e.status, 409);
      assert.equal(e.code, 'conflict');
      return true;
    });
  });

  it('unlinks with 204 and records unlink_provider; the last sign-in method answers 422', async () => {
    const user = await createUser(t);
    const google = await link(user.id, 'google', `g-${user.id}`);
    const discord = await link(user.id, 'discord', `d-${user.id}`);
    const del = (id: string, who = user) =>
      t.app.inject({ method: 'DELETE', url: `/users/me/oauth-tokens/${id}`, headers: who.auth });

    const other = await createUser(t);
    const notMine = await del(google, other);
    assert.equal(notMine.statusCode, 404);

    t.clock.advance(1);
    const res = await del(google);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const activity = json(
      await t.app.inject({ method: 'GET', url: '/users/me/activity', headers: user.auth }),
    );
    assert.deepEqual(
      { type: activity.items[0].type, provider: activity.items[0].provider },
      { type: 'unlink_provider', provider: 'google' },
    );

    const last = await del(discord);
    assert.equal(last.statusCode, 422);
    assert.equal(json(last).error.code, 'unprocessable_entity');
    assert.equal((await del(google)).statusCode, 404);
    const records = json(
      await t.app.inject({ method: 'GET', url: '/users/me/oauth-tokens', headers: user.auth }),
    );
    assert.deepEqual(
      records.map((r: { id: string }) => r.id),
      [discord],
    );
  });
});
