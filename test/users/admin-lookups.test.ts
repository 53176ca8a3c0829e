import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { type TestApp, type TestUser, buildTestApp, createUser, grantSystem, json } from '../helpers/app.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';

let t: TestApp;
let admin: TestUser;
let plain: TestUser;
let target: TestUser;
let wallet: TestWallet;

before(async () => {
  t = await buildTestApp();
  admin = await createUser(t);
  plain = await createUser(t);
  target = await createUser(t, { username: 'findable-user' });
  await grantSystem(t, admin.id, ['admin.users.view']);
  wallet = createTestWallet();
  const ch = await t.app.inject({
    method: 'POST',
    url: '/users/me/wallet-challenge',
    headers: target.auth,
    payload: { address: wallet.address },
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/public-keys',
    headers: target.auth,
    payload: { blockchain: 'solana', ...wallet.prove(json(ch).message) },
  });
  assert.equal(res.statusCode, 201);
});
after(() => t.close());

const find = (identifier: unknown, who = admin.auth) =>
  t.app.inject({ method: 'POST', url: '/users/find-by-identifier', headers: who, payload: { identifier } });
const findWallets = (addresses: unknown, who = admin.auth) =>
  t.app.inject({ method: 'POST', url: '/users/find-by-wallets', headers: who, payload: { addresses } });

describe('POST /users/find-by-identifier', () => {
  it('finds a user by id, username (any case) or wallet address, as the full User', async () => {
    for (const identifier of [target.id, 'findable-user', 'Findable-User', wallet.address]) {
      const res = await find(identifier);
      assert.equal(res.statusCode, 200, res.body);
      const user = json(res);
      assert.equal(user.id, target.id, identifier);
      assert.equal(user.username, 'findable-user');
      assert.equal(user.userPublicKeys[0].address, wallet.address);
    }
    assert.equal((await find(target.id)).headers['ratelimit-limit'], '30');
  });

  it('answers null for an unknown identifier', async () => {
    const res = await find('nobody-here');
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'null');
    assert.equal((await find(createTestWallet().address)).body, 'null');
  });

  it('needs admin.users.view (403 with details.missing), authentication and a valid body', async () => {
    const res = await find(target.id, plain.auth);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(json(res).error.details.missing, ['admin.users.view']);
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/users/find-by-identifier', payload: { identifier: 'x' } }))
        .statusCode,
      401,
    );
    for (const identifier of ['', 5, 'x'.repeat(201)]) assert.equal((await find(identifier)).statusCode, 400);
  });

  it("holds an admin's API key to its scopes", async () => {
    const mint = async (scopes: string[]) =>
      json(
        await t.app.inject({
          method: 'POST',
          url: '/users/me/api-keys',
          headers: admin.auth,
          payload: { name: 'lookup', scopes },
        }),
      ).key;
    const narrow = await mint(['users:read']);
    assert.equal((await find(target.id, { authorization: `Bearer ${narrow}` })).statusCode, 403);
    const allowed = await mint(['admin.users.view']);
    const res = await find(target.id, { authorization: `Bearer ${allowed}` });
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).id, target.id);
  });
});

describe('POST /users/find-by-wallets', () => {
  it('answers each address in order with its user or null', async () => {
    const unknown = createTestWallet().address;
    const res = await findWallets([unknown, wallet.address, wallet.address]);
    assert.equal(res.statusCode, 200, res.body);
    const { results } = json(res);
    assert.deepEqual(
      results.map((r: { address: string; user: { id: string } | null }) => [r.address, r.user?.id ?? null]),
      [
        [unknown, null],
        [wallet.address, target.id],
        [wallet.address, target.id],
      ],
    );
  });

  it('answers 400 validation_failed for an empty list, more than 100, or an invalid address', async () => {
    const many = Array.from({ length: 101 }, () => createTestWallet().address);
    for (const addresses of [[], many, ['not base58 0OIl'], [bs58.encode(Buffer.alloc(31, 9))], 'x']) {
      const res = await findWallets(addresses);
      assert.equal(res.statusCode, 400, JSON.stringify(addresses).slice(0, 60));
      assert.equal(json(res).error.code, 'validation_failed');
    }
    const bad = await findWallets([wallet.address, 'nope']);
    assert.deepEqual(
      json(bad).error.details.fields.map((f: { field: string }) => f.field),
      ['addresses.1'],
    );
    assert.equal((await findWallets(many.slice(0, 100))).statusCode, 200);
  });

  it('needs admin.users.view', async () => {
    const res = await findWallets([wallet.address], plain.auth);
    assert.equal(res.statusCode, 403);
  });

  it('is limited to 30 per minute per key', async () => {
    const limited = await createUser(t);
    await grantSystem(t, limited.id, ['admin.users.view']);
    for (let i = 0; i < 30; i++) {
      const res = await findWallets([wallet.address], limited.auth);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-remaining'], String(29 - i));
    }
    const res = await findWallets([wallet.address], limited.auth);
    assert.equal(res.statusCode, 429);
    assert.equal(json(res).error.code, 'rate_limited');
  });
});
