import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers/app.js';
import { addMember } from '../helpers/fixtures.js';
import {
  auditOf,
  brandUrl,
  call,
  createBrand,
  expect400,
  expect403,
  expect404,
  expect409,
  memberWith,
  type World,
  world,
} from './setup.js';

describe('brand scopes', () => {
  let t: TestApp;
  let w: World;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    w = await world(t);
  });
  after(() => t.close());

  async function brandWithScopes(...names: string[]) {
    const b = await createBrand(t, w.owner, w.org);
    const url = `${brandUrl(w.org, b.slug)}/scopes`;
    for (const name of names) {
      const res = await call(t, w.owner, 'POST', url, { name, description: `Lets the app ${name}` });
      assert.equal(res.status, 201, res.raw);
    }
    return { brand: b, url };
  }

  it('creates a scope and lists it with total, sorted by name', async () => {
    const { brand, url } = await brandWithScopes('orders:write');
    const res = await call(t, w.owner, 'POST', url, { name: 'orders:read', description: 'Read your orders' });
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(res.body, {
      name: 'orders:read',
      description: 'Read your orders',
      gatePolicyId: null,
      createdAt: t.clock.now().toISOString(),
    });
    const list = await call(t, w.owner, 'GET', url);
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 2);
    assert.deepEqual(
      list.body.items.map((s: any) => s.name),
      ['orders:read', 'orders:write'],
    );
    const got = await call(t, w.owner, 'GET', `${url}/orders:read`);
    assert.deepEqual(got.body, res.body);
    const audit = await auditOf(t, w.org.id, 'brand.scope.created');
    assert.ok(
      audit.some(
        (a) => (a.metadata as any).brand === brand.slug && (a.metadata as any).name === 'orders:read',
      ),
    );
  });

  it('accepts the whole name alphabet and both length bounds', async () => {
    const { url } = await brandWithScopes();
    for (const name of ['ab', 'a'.repeat(80), 'read_all:things-1']) {
      assert.equal((await call(t, w.owner, 'POST', url, { name, description: 'd' })).status, 201, name);
    }
  });

  const invalid: Array<[string, Record<string, unknown>, string, string?]> = [
    ['a one-character name', { name: 'a', description: 'd' }, 'name', 'invalid_format'],
    ['a name over 80', { name: 'a'.repeat(81), description: 'd' }, 'name', 'invalid_format'],
    ['upper case', { name: 'Orders:read', description: 'd' }, 'name', 'invalid_format'],
    ['a space', { name: 'orders read', description: 'd' }, 'name', 'invalid_format'],
    ['a dot', { name: 'orders.read', description: 'd' }, 'name', 'invalid_format'],
    ['a missing name', { description: 'd' }, 'name', 'required'],
    ['a missing description', { name: 'orders:list' }, 'description', 'required'],
    ['an empty description', { name: 'orders:list', description: '' }, 'description', 'too_short'],
    [
      'a description over 500',
      { name: 'orders:list', description: 'd'.repeat(501) },
      'description',
      'too_long',
    ],
    ['an unknown field', { name: 'orders:list', description: 'd', id: 'x' }, 'id', 'unknown_field'],
  ];
  for (const [what, body, field, code] of invalid) {
    it(`refuses ${what} with 400`, async () => {
      const { url } = await brandWithScopes();
      expect400(await call(t, w.owner, 'POST', url, body), field, code);
    });
  }

  for (const name of ['openid', 'profile', 'email', 'offline_access']) {
    it(`refuses the standard scope "${name}" as a name with 400`, async () => {
      const { url } = await brandWithScopes();
      expect400(await call(t, w.owner, 'POST', url, { name, description: 'd' }), 'name', 'reserved');
    });
  }

  it('refuses a duplicate name in the brand with 409; another brand may use it', async () => {
    const { url } = await brandWithScopes('orders:read');
    expect409(await call(t, w.owner, 'POST', url, { name: 'orders:read', description: 'again' }));
    const other = await brandWithScopes();
    assert.equal(
      (await call(t, w.owner, 'POST', other.url, { name: 'orders:read', description: 'd' })).status,
      201,
    );
  });

  it('updates the description only; the name is immutable', async () => {
    const { url } = await brandWithScopes('orders:read');
    const res = await call(t, w.owner, 'PATCH', `${url}/orders:read`, { description: 'See your orders' });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.name, 'orders:read');
    assert.equal(res.body.description, 'See your orders');
    assert.equal((await call(t, w.owner, 'GET', `${url}/orders:read`)).body.description, 'See your orders');
    expect400(
      await call(t, w.owner, 'PATCH', `${url}/orders:read`, { name: 'orders:see', description: 'x' }),
      'name',
      'unknown_field',
    );
    // Issue 21: description and gatePolicyId are each optional, but a PATCH must change something.
    expect400(await call(t, w.owner, 'PATCH', `${url}/orders:read`, {}), 'body');
    expect400(
      await call(t, w.owner, 'PATCH', `${url}/orders:read`, { description: '' }),
      'description',
      'too_short',
    );
    expect404(await call(t, w.owner, 'PATCH', `${url}/orders:none`, { description: 'x' }));
    assert.ok((await auditOf(t, w.org.id, 'brand.scope.updated')).length >= 1);
  });

  it('deletes an unused scope with 204', async () => {
    const { url } = await brandWithScopes('orders:read');
    const res = await call(t, w.owner, 'DELETE', `${url}/orders:read`);
    assert.equal(res.status, 204);
    assert.equal(res.raw, '');
    expect404(await call(t, w.owner, 'GET', `${url}/orders:read`));
    expect404(await call(t, w.owner, 'DELETE', `${url}/orders:read`));
    assert.equal((await call(t, w.owner, 'GET', url)).body.total, 0);
  });

  it('refuses to delete a scope an app lists (409) until no live app does', async () => {
    const { brand, url } = await brandWithScopes('orders:read', 'orders:write');
    const apps = `${brandUrl(w.org, brand.slug)}/apps`;
    const app = await call(t, w.owner, 'POST', apps, {
      name: 'Worker',
      type: 'm2m',
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders:read'],
    });
    assert.equal(app.status, 201, app.raw);
    const res = await call(t, w.owner, 'DELETE', `${url}/orders:read`);
    expect409(res);
    assert.deepEqual(res.body.error.details.apps, [app.body.clientId]);
    assert.equal((await call(t, w.owner, 'DELETE', `${url}/orders:write`)).status, 204);
    assert.equal((await call(t, w.owner, 'DELETE', `${apps}/${app.body.clientId}`)).status, 204);
    assert.equal((await call(t, w.owner, 'DELETE', `${url}/orders:read`)).status, 204);
  });

  it('lets the scope be deleted once the app stops listing it', async () => {
    const { brand, url } = await brandWithScopes('orders:read');
    const apps = `${brandUrl(w.org, brand.slug)}/apps`;
    const app = await call(t, w.owner, 'POST', apps, {
      name: 'Worker',
      type: 'm2m',
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders:read', 'openid'],
    });
    expect409(await call(t, w.owner, 'DELETE', `${url}/orders:read`));
    await call(t, w.owner, 'PATCH', `${apps}/${app.body.clientId}`, { allowedScopes: ['openid'] });
    assert.equal((await call(t, w.owner, 'DELETE', `${url}/orders:read`)).status, 204);
  });

  it('reads need org.brands.view, writes org.scopes.edit', async () => {
    const { url } = await brandWithScopes('orders:read');
    const member = await createUser(t);
    await addMember(t, w.org, member, 'member');
    assert.equal((await call(t, member, 'GET', url)).status, 200);
    assert.equal((await call(t, member, 'GET', `${url}/orders:read`)).status, 200);
    expect403(await call(t, member, 'POST', url, { name: 'x:y', description: 'd' }), 'org.scopes.edit');
    expect403(await call(t, member, 'PATCH', `${url}/orders:read`, { description: 'd' }), 'org.scopes.edit');
    expect403(await call(t, member, 'DELETE', `${url}/orders:read`), 'org.scopes.edit');
    const reader = await memberWith(t, w.org, ['org.read']);
    expect403(await call(t, reader, 'GET', url), 'org.brands.view');
    expect403(await call(t, reader, 'GET', `${url}/orders:read`), 'org.brands.view');
    const editor = await memberWith(t, w.org, ['org.scopes.edit']);
    assert.equal((await call(t, editor, 'POST', url, { name: 'x:y', description: 'd' })).status, 201);
  });

  it("answers 404 for another org's brand scopes on every route", async () => {
    const { brand, url } = await brandWithScopes('orders:read');
    const theirs = `${brandUrl(w.otherOrg, brand.slug)}/scopes`;
    const o = w.otherOwner;
    expect404(await call(t, o, 'GET', url));
    expect404(await call(t, o, 'GET', `${url}/orders:read`));
    expect404(await call(t, o, 'POST', url, { name: 'x:y', description: 'd' }));
    expect404(await call(t, o, 'PATCH', `${url}/orders:read`, { description: 'd' }));
    expect404(await call(t, o, 'DELETE', `${url}/orders:read`));
    expect404(await call(t, o, 'GET', theirs));
    expect404(await call(t, o, 'DELETE', `${theirs}/orders:read`));
    expect404(await call(t, w.owner, 'GET', `${url}/orders:none`));
    assert.equal((await call(t, w.owner, 'GET', url)).body.total, 1);
  });
});
