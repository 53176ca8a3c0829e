import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { AppContext } from '../../src/context.js';
import { authenticate } from '../../src/http/auth.js';
import { installKeyScopes } from '../../src/http/key-scopes.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';

/**
 * API-key scopes are structural: every route that authenticates declares what a key needs, a route
 * that declares nothing stops the app from starting, and a key whose scopes do not meet the route's
 * declaration is refused (403) before anything else looks at the request.
 */
let t: TestApp;
let owner: TestUser;
let org: TestOrg;
const keys: Record<string, string> = {};

async function newKey(scopes: string[]): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/users/me/api-keys',
    headers: owner.auth,
    payload: { name: `key ${scopes.join(' ')}`, scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).key;
}

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
  owner = await createUser(t);
  org = await seedOrg(t, owner);
  // The owner holds every org permission and every system permission, so only the key's scopes
  // can be what refuses it.
  await t.ctx.db
    .insertInto('system_permissions')
    .values(
      ['admin.orgs.view', 'admin.orgs.edit', 'admin.users.view'].map((permission) => ({
        user_id: owner.id,
        permission,
        granted_at: t.clock.now(),
      })),
    )
    .execute();
  keys['org.apps.view'] = await newKey(['org.apps.view']);
  keys['org.webhooks.view'] = await newKey(['org.webhooks.view']);
  keys['users:write'] = await newKey(['users:write']);
});
after(() => t.close());

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('0000000d49484452000000010000000108060000001f15c489', 'hex'),
]);

describe('a key scoped to org.apps.view', () => {
  const key = () => ({ authorization: `Bearer ${keys['org.apps.view']}` });

  it('cannot create an organization', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: key(),
      payload: { name: 'Sneaky', slug: 'sneaky-org' },
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(json(res).error.code, 'forbidden');
  });

  it('cannot upload files', async () => {
    const boundary = '----ks-boundary';
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      PNG,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      headers: { ...key(), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    assert.equal(res.statusCode, 403, res.body);
  });

  it('still reads the apps of its org', async () => {
    const res = await t.app.inject({
      url: `/identity/organizations/${org.slug}/brands`,
      headers: key(),
    });
    assert.equal(res.statusCode, 403, 'brands are not apps');
    const own = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: key() });
    assert.equal(own.statusCode, 403, 'org.read is not org.apps.view');
  });
});

describe('every authenticated route', () => {
  it('declares what an API key needs', () => {
    assert.ok(t.app.keyScopedRoutes.length > 50, `${t.app.keyScopedRoutes.length} routes`);
  });

  it('refuses a key with an unrelated scope (403), before validation or any other guard', async () => {
    const failures: string[] = [];
    for (const { method, url, rule } of t.app.keyScopedRoutes) {
      const scope = Object.keys(keys).find((s) => rule === 'access-token-only' || !rule.includes(s));
      assert.ok(scope, `${method} ${url}: no unrelated key`);
      const path = url
        .replace(':orgSlug', org.slug)
        .replace(/:([A-Za-z]+)/g, (_, name: string) => `${name.toLowerCase()}-x`);
      const res = await t.app.inject({
        method: method as 'GET',
        url: path,
        headers: { authorization: `Bearer ${keys[scope]}` },
      });
      const code = method === 'HEAD' ? 'forbidden' : res.body && json(res).error?.code;
      if (res.statusCode !== 403 || code !== 'forbidden')
        failures.push(`${method} ${url} with ${scope}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('lets an unscoped key through the declaration (its user decides)', async () => {
    const full = await newKey([]);
    const res = await t.app.inject({
      url: '/identity/organizations',
      headers: { authorization: `Bearer ${full}` },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});

describe('a route that authenticates but declares nothing', () => {
  it('stops the app from starting, naming the route', async () => {
    const app = Fastify();
    installKeyScopes(app);
    await assert.rejects(
      (async () => {
        app.get('/undeclared', { preHandler: authenticate({} as AppContext) }, async () => ({}));
        await app.ready();
      })(),
      /GET \/undeclared authenticates but declares no API-key scope/,
    );
    await app.close().catch(() => {});
  });
});
