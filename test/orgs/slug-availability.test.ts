import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, type TestUser, buildTestApp, consoleToken, createUser, json } from '../helpers/app.js';

let t: TestApp;
let owner: TestUser;
let other: TestUser;

before(async () => {
  t = await buildTestApp();
  owner = await createUser(t);
  other = await createUser(t);
});
after(() => t.close());

const check = (slug: string, who: { authorization: string } | Record<string, never> = owner.auth) =>
  t.app.inject({
    method: 'GET',
    url: `/identity/organization-slug-availability?slug=${encodeURIComponent(slug)}`,
    headers: who,
  });

async function createOrg(slug: string, who = owner) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/identity/organizations',
    headers: who.auth,
    payload: { name: slug, slug },
  });
  assert.equal(res.statusCode, 201, res.body);
}

/** Console tokens live an hour: after moving the clock by days, the users sign in again. */
async function renewTokens() {
  for (const u of [owner, other]) {
    u.token = await consoleToken(t, u.id);
    u.auth = { authorization: `Bearer ${u.token}` };
  }
}

async function apiKey(scopes: string[]) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/api-keys',
    headers: other.auth,
    payload: { name: `key ${scopes.join(' ')}`, scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { authorization: `Bearer ${json(res).key}` };
}

describe('GET /identity/organization-slug-availability', () => {
  it('a free slug is available; the answer is not cached', async () => {
    const res = await check('free-slug');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { slug: 'free-slug', available: true });
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('a live org makes its slug taken, for every user', async () => {
    await createOrg('live-org');
    assert.deepEqual(json(await check('live-org', other.auth)), {
      slug: 'live-org',
      available: false,
      reason: 'taken',
    });
  });

  it("a deleted org's slug is reserved for 90 days, then available (and creatable) again", async () => {
    await createOrg('gone-org');
    const del = await t.app.inject({
      method: 'DELETE',
      url: '/identity/organizations/gone-org',
      headers: owner.auth,
    });
    assert.equal(del.statusCode, 204, del.body);
    assert.deepEqual(json(await check('gone-org')), {
      slug: 'gone-org',
      available: false,
      reason: 'reserved',
    });
    t.clock.advance(89 * 24 * 3600);
    await renewTokens();
    assert.equal(json(await check('gone-org')).reason, 'reserved');
    t.clock.advance(24 * 3600);
    await renewTokens();
    assert.deepEqual(json(await check('gone-org')), { slug: 'gone-org', available: true });
    // The answer matches what creation does.
    await createOrg('gone-org', other);
    assert.equal(json(await check('gone-org')).reason, 'taken');
  });

  it('a slug outside the rule is 400 at the slug field', async () => {
    for (const slug of ['ab', 'UPPER', 'a_b_c', 'x'.repeat(31)]) {
      const res = await check(slug);
      assert.equal(res.statusCode, 400, slug);
      assert.equal(json(res).error.code, 'validation_failed');
      assert.match(JSON.stringify(json(res).error.details.fields), /slug/);
    }
    const missing = await t.app.inject({
      method: 'GET',
      url: '/identity/organization-slug-availability',
      headers: owner.auth,
    });
    assert.equal(missing.statusCode, 400);
  });

  it('needs a signed-in user: 401 without a credential', async () => {
    assert.equal((await check('free-slug', {})).statusCode, 401);
  });

  it('an API key needs users:read (403 otherwise)', async () => {
    const narrow = await apiKey(['org.members.view']);
    const res = await check('free-slug', narrow);
    assert.equal(res.statusCode, 403);
    const reader = await apiKey(['users:read']);
    assert.equal((await check('free-slug', reader)).statusCode, 200);
  });

  it('is rate-limited per user and network source', async () => {
    const user = await createUser(t);
    let last = 0;
    for (let i = 0; i < 121; i++) last = (await check(`slug-${i}-x`, user.auth)).statusCode;
    assert.equal(last, 429);
    // Another user from the same source still has their own budget.
    assert.equal((await check('slug-y', owner.auth)).statusCode, 200);
  });
});
