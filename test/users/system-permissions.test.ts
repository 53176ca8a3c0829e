import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, type TestUser, buildTestApp, createUser, grantSystem, json } from '../helpers/app.js';

let t: TestApp;
let operator: TestUser;
let plain: TestUser;

before(async () => {
  t = await buildTestApp();
  operator = await createUser(t);
  plain = await createUser(t);
  await grantSystem(t, operator.id, ['admin.users.view', 'admin.orgs.view']);
});
after(() => t.close());

const mine = (headers: Record<string, string>) =>
  t.app.inject({ method: 'GET', url: '/users/me/system-permissions', headers });

async function apiKey(user: TestUser, scopes: string[]) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/api-keys',
    headers: user.auth,
    payload: { name: 'key', scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { authorization: `Bearer ${json(res).key}` };
}

describe('GET /users/me/system-permissions', () => {
  it("lists the caller's system permissions", async () => {
    const res = await mine(operator.auth);
    assert.equal(res.statusCode, 200);
    assert.deepEqual([...json(res).permissions].sort(), ['admin.orgs.view', 'admin.users.view']);
    assert.equal(res.headers['ratelimit-limit'], '60');
  });

  it('is empty for a user without any', async () => {
    assert.deepEqual(json(await mine(plain.auth)), { permissions: [] });
  });

  it('with an API key, only what its scopes allow; without users:read, 403', async () => {
    const both = await apiKey(operator, ['users:read', 'admin.users.view']);
    assert.deepEqual(json(await mine(both)), { permissions: ['admin.users.view'] });
    const noRead = await apiKey(operator, ['admin.users.view']);
    assert.equal((await mine(noRead)).statusCode, 403);
  });

  it('401 without a credential', async () => {
    assert.equal((await mine({})).statusCode, 401);
  });
});
