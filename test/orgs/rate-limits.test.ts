import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rateLimits } from '../../src/config/defaults.js';
import { createUser, grantSystem, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { assertError, randomSlug } from './helpers.js';
import { buildTestApp } from '../helpers/app.js';

/** RATE_LIMIT_MULTIPLIER 0.1: orgRead and auditLogRead allow 6 a minute, orgWrite 3. */
const MULTIPLIER = 0.1;
const reads = Math.round(rateLimits.orgRead.points * MULTIPLIER);
const writes = Math.round(rateLimits.orgWrite.points * MULTIPLIER);
const auditReads = Math.round(rateLimits.auditLogRead.points * MULTIPLIER);

describe('org rate limits (per org)', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let operator: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: String(MULTIPLIER) } });
    owner = await createUser(t);
    member = await createUser(t);
    operator = await createUser(t);
    await grantSystem(t, operator.id, ['admin.orgs.view']);
  });
  after(() => t.close());

  async function freshOrg(): Promise<TestOrg> {
    const org = await seedOrg(t, owner);
    await addMember(t, org, member, 'member');
    return org;
  }

  it('limits GETs under /identity/organizations/:orgSlug to 60/min per org, shared by all members', async () => {
    const org = await freshOrg();
    const other = await freshOrg();
    for (let i = 0; i < reads; i++) {
      const user = i % 2 ? owner : member;
      const res = await t.app.inject({
        url: `/identity/organizations/${org.slug}/members`,
        headers: user.auth,
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], String(reads));
      assert.equal(res.headers['ratelimit-remaining'], String(reads - i - 1));
    }
    const limited = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth });
    const err = assertError(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(err.details.limit, reads);
    assert.equal(err.details.window, 60);
    // Another org has its own budget, and so do the audit log and the admin mirror.
    assert.equal(
      (await t.app.inject({ url: `/identity/organizations/${other.slug}`, headers: owner.auth })).statusCode,
      200,
    );
    assert.equal(
      (await t.app.inject({ url: `/identity/organizations/${org.slug}/audit-log`, headers: owner.auth }))
        .statusCode,
      200,
    );
    assert.equal(
      (await t.app.inject({ url: `/admin/identity/organizations/${org.slug}`, headers: operator.auth }))
        .statusCode,
      200,
    );
  });

  it('does not let outsiders spend an org’s budget', async () => {
    const org = await freshOrg();
    const outsider = await createUser(t);
    for (let i = 0; i < reads + 2; i++) {
      const res = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: outsider.auth });
      assert.equal(res.statusCode, 404);
    }
    assert.equal(
      (await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth })).statusCode,
      200,
    );
  });

  it('limits writes to 30/min per org', async () => {
    const org = await freshOrg();
    for (let i = 0; i < writes; i++) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
        payload: { name: `Name ${i}` },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const limited = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/roles`,
      headers: owner.auth,
      payload: { name: 'Late', permissions: [] },
    });
    assertError(limited, 429, 'rate_limited');
    const role = await t.ctx.db
      .selectFrom('roles')
      .select('id')
      .where('org_id', '=', org.id)
      .where('name', '=', 'Late')
      .executeTakeFirst();
    assert.equal(role, undefined);
  });

  it('limits the audit log to 60/min per org', async () => {
    const org = await freshOrg();
    for (let i = 0; i < auditReads; i++) {
      const res = await t.app.inject({
        url: `/identity/organizations/${org.slug}/audit-log`,
        headers: member.auth,
      });
      assert.equal(res.statusCode, 200);
    }
    const limited = await t.app.inject({
      url: `/identity/organizations/${org.slug}/audit-log`,
      headers: owner.auth,
    });
    assertError(limited, 429, 'rate_limited');
  });

  it('limits org creation per user', async () => {
    const creator = await createUser(t);
    for (let i = 0; i < writes; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/identity/organizations',
        headers: creator.auth,
        payload: { name: 'x', slug: randomSlug() },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const slug = randomSlug();
    const limited = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: creator.auth,
      payload: { name: 'x', slug },
    });
    assertError(limited, 429, 'rate_limited');
    const other = await createUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: other.auth,
      payload: { name: 'x', slug },
    });
    assert.equal(res.statusCode, 201);
  });
});
