import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaults } from '../../src/config/defaults.js';
import { sha256 } from '../../src/lib/hash.js';
import { sweepDeletedAccounts } from '../../src/modules/users/account.service.js';
import { restoreIfInGrace, upsertOAuthLink } from '../../src/stores/accounts.store.js';
import { type TestApp, type TestUser, buildTestApp, consoleToken, createUser, json } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';
import { refresh, signInToApp } from './flow.js';

let t: TestApp;
let client: SeededClient;

before(async () => {
  t = await buildTestApp();
  client = await seedClient(t);
});
after(() => t.close());

const GRACE = defaults.accountDeletionGrace;

async function asUser(userId: string): Promise<TestUser> {
  const token = await consoleToken(t, userId);
  return { id: userId, username: '', token, auth: { authorization: `Bearer ${token}` } };
}

async function linkOAuth(userId: string, externalUserId = `ext-${userId}`) {
  return t.ctx.db.transaction().execute((trx) =>
    upsertOAuthLink(t.ctx, trx, {
      userId,
      provider: 'discord',
      externalUserId,
      username: 'disco',
      accessToken: 'discord-access-secret',
      refreshToken: 'discord-refresh-secret',
    }),
  );
}

async function deleteMe(user: TestUser) {
  const res = await t.app.inject({ method: 'DELETE', url: '/users/me', headers: user.auth });
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');
}

describe('DELETE /users/me', () => {
  let wallet: TestWallet;
  let session: Awaited<ReturnType<typeof signInToApp>>;
  let user: TestUser;
  let apiKey: string;

  before(async () => {
    wallet = createTestWallet();
    session = await signInToApp(t, client, wallet);
    user = await asUser(session.userId);
    await t.app.inject({
      method: 'PATCH',
      url: `/users/${user.id}`,
      headers: user.auth,
      payload: { username: 'leaving-soon' },
    });
    await linkOAuth(user.id);
    apiKey = json(
      await t.app.inject({
        method: 'POST',
        url: '/users/me/api-keys',
        headers: user.auth,
        payload: { name: 'k' },
      }),
    ).key;
  });

  it('destroys sessions, revokes tokens, deletes wallets, links and keys at once; keeps only identity hashes', async () => {
    assert.equal(
      (
        await t.app.inject({
          method: 'GET',
          url: '/userinfo',
          headers: { authorization: `Bearer ${session.accessToken}` },
        })
      ).statusCode,
      200,
    );
    await deleteMe(user);

    for (const auth of [user.auth, { authorization: `Bearer ${apiKey}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/users/me', headers: auth });
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).error.code, 'invalid_token');
    }
    const info = await t.app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    assert.equal(info.statusCode, 401);
    const refreshed = await refresh(t, client, session.refreshToken);
    assert.equal(refreshed.statusCode, 400);
    assert.equal(json(refreshed).error, 'invalid_grant');

    const count = async (table: 'sessions' | 'user_public_keys' | 'oauth_links' | 'api_keys') =>
      (await t.ctx.db.selectFrom(table).select('user_id').where('user_id', '=', user.id).execute()).length;
    assert.equal(await count('sessions'), 0);
    assert.equal(await count('user_public_keys'), 0);
    assert.equal(await count('oauth_links'), 0);
    assert.equal(await count('api_keys'), 0);

    const row = await t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.deleted_at?.toISOString(), t.clock.now().toISOString());
    const identities = await t.ctx.db
      .selectFrom('deleted_identities')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.deepEqual(
      identities.map((i) => i.identity_hash).sort(),
      [sha256(`wallet:${wallet.address}`), sha256(`oauth:discord:ext-${user.id}`)].sort(),
    );
    assert.ok(!JSON.stringify(identities).includes(wallet.address));
  });

  it('keeps the username reserved and frees the wallet for another account', async () => {
    const other = await createUser(t);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/users/${other.id}`,
      headers: other.auth,
      payload: { username: 'leaving-soon' },
    });
    assert.equal(res.statusCode, 409);
    const ch = await t.app.inject({
      method: 'POST',
      url: '/users/me/wallet-challenge',
      headers: other.auth,
      payload: { address: wallet.address },
    });
    const linked = await t.app.inject({
      method: 'POST',
      url: '/users/me/public-keys',
      headers: other.auth,
      payload: { blockchain: 'solana', ...wallet.prove(json(ch).message) },
    });
    assert.equal(linked.statusCode, 201, linked.body);
  });

  it('is refused for an API key and without credentials', async () => {
    const u = await createUser(t);
    const key = json(
      await t.app.inject({
        method: 'POST',
        url: '/users/me/api-keys',
        headers: u.auth,
        payload: { name: 'k' },
      }),
    ).key;
    const viaKey = await t.app.inject({
      method: 'DELETE',
      url: '/users/me',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(viaKey.statusCode, 403);
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/users/me' })).statusCode, 401);
    const row = await t.ctx.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.deleted_at, null);
  });
});

describe('signing in again during the grace window', () => {
  it('restores the same account with the wallet it signs in with', async () => {
    const wallet = createTestWallet();
    const first = await signInToApp(t, client, wallet);
    await deleteMe(await asUser(first.userId));
    t.clock.advance(GRACE - 60);
    const again = await signInToApp(t, client, wallet);
    assert.equal(again.userId, first.userId);
    const me = json(
      await t.app.inject({ method: 'GET', url: '/users/me', headers: (await asUser(again.userId)).auth }),
    );
    assert.equal(me.id, first.userId);
    assert.deepEqual(
      me.userPublicKeys.map((k: { address: string }) => k.address),
      [wallet.address],
    );
    const identities = await t.ctx.db
      .selectFrom('deleted_identities')
      .select('user_id')
      .where('user_id', '=', first.userId)
      .execute();
    assert.equal(identities.length, 0);
  });

  it('restores through an OAuth identity (restoreIfInGrace)', async () => {
    const u = await createUser(t);
    const w = createTestWallet();
    await linkOAuth(u.id, 'oauth-restore');
    await deleteMe(u);
    const restored = await t.ctx.db.transaction().execute((trx) =>
      restoreIfInGrace(trx, t.clock, {
        kind: 'oauth',
        provider: 'discord',
        externalUserId: 'oauth-restore',
      }),
    );
    assert.equal(restored, u.id);
    const row = await t.ctx.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.deleted_at, null);
    const unknown = await t.ctx.db
      .transaction()
      .execute((trx) => restoreIfInGrace(trx, t.clock, { kind: 'wallet', address: w.address }));
    assert.equal(unknown, null);
  });

  it('creates a new account once the window has ended', async () => {
    const wallet = createTestWallet();
    const first = await signInToApp(t, client, wallet);
    await deleteMe(await asUser(first.userId));
    t.clock.advance(GRACE + 1);
    const again = await signInToApp(t, client, wallet);
    assert.notEqual(again.userId, first.userId);
  });
});

describe('sweepDeletedAccounts', () => {
  it('moves accounts past the window to the graveyard and releases their usernames; leaves the rest', async () => {
    const old = await createUser(t, { username: 'gone-for-good' });
    const recent = await createUser(t, { username: 'still-in-grace' });
    await deleteMe(old);
    t.clock.advance(GRACE - 10);
    await deleteMe(await asUser(recent.id));
    t.clock.advance(11);
    const deletedAt = new Date(t.clock.nowMs() - (GRACE + 1) * 1000);

    const purged = await sweepDeletedAccounts(t.ctx);
    assert.ok(purged >= 1);
    assert.equal(
      await t.ctx.db.selectFrom('users').select('id').where('id', '=', old.id).executeTakeFirst(),
      undefined,
    );
    const grave = await t.ctx.db
      .selectFrom('users_graveyard')
      .selectAll()
      .where('id', '=', old.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(Object.keys(grave).sort(), ['deleted_at', 'id', 'purged_at']);
    assert.equal(grave.deleted_at.toISOString(), deletedAt.toISOString());
    assert.equal(grave.purged_at.toISOString(), t.clock.now().toISOString());
    assert.ok(await t.ctx.db.selectFrom('users').select('id').where('id', '=', recent.id).executeTakeFirst());

    const someone = await createUser(t);
    const avail = await t.app.inject({
      method: 'POST',
      url: '/users/username-availability',
      headers: someone.auth,
      payload: { username: 'gone-for-good' },
    });
    assert.deepEqual(json(avail), { available: true });
    assert.deepEqual(
      json(
        await t.app.inject({
          method: 'POST',
          url: '/users/username-availability',
          headers: someone.auth,
          payload: { username: 'still-in-grace' },
        }),
      ),
      { available: false },
    );
    assert.equal(await sweepDeletedAccounts(t.ctx), 0, 'a second sweep finds nothing');
  });
});
