import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeFile } from '../../src/modules/files/files.service.js';
import { buildTestApp, createUser, grantSystem, type TestApp } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import {
  auditOf,
  brandUrl,
  call,
  createBrand,
  eventsOf,
  expect400,
  expect403,
  expect404,
  expect409,
  memberWith,
  orgUrl,
  slug,
  type World,
  world,
} from './setup.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe('brands', () => {
  let t: TestApp;
  let w: World;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    w = await world(t);
  });
  after(() => t.close());

  describe('create', () => {
    it('creates a brand with defaults, a generated callback id and the org id', async () => {
      const s = slug();
      const res = await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, { slug: s, name: 'Acme' });
      assert.equal(res.status, 201, res.raw);
      const b = res.body;
      assert.match(b.id, /^brand_/);
      assert.equal(b.org, w.org.id);
      assert.equal(b.slug, s);
      assert.equal(b.name, 'Acme');
      assert.match(b.oauthCallbackId, /^[A-Za-z0-9]{24}$/);
      assert.deepEqual(b.providerOrder, ['solana']);
      assert.equal(b.createdAt, t.clock.now().toISOString());
      assert.equal(b.updatedAt, b.createdAt);
      for (const f of ['primaryColor', 'supportEmail', 'privacyPolicyUrl', 'termsUrl', 'logoFile'])
        assert.equal(f in b, false, f);
      const audit = await auditOf(t, w.org.id, 'brand.created');
      assert.ok(audit.some((a) => a.resource_id === b.id && a.actor_user_id === w.owner.id));
    });

    it('stores every optional field and answers the logo as a FileTracker', async () => {
      const file = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: w.owner.id });
      const b = await createBrand(t, w.owner, w.org, {
        primaryColor: '#0af',
        supportEmail: 'help@acme.example',
        privacyPolicyUrl: 'https://acme.example/privacy',
        termsUrl: 'https://acme.example/terms',
        logoFile: file.id,
        providerOrder: ['google', 'solana', 'telegram'],
      });
      assert.equal(b.primaryColor, '#0af');
      assert.equal(b.supportEmail, 'help@acme.example');
      assert.equal(b.privacyPolicyUrl, 'https://acme.example/privacy');
      assert.equal(b.termsUrl, 'https://acme.example/terms');
      assert.deepEqual(b.providerOrder, ['google', 'solana', 'telegram']);
      assert.deepEqual(b.logoFile, {
        id: file.id,
        fileKey: file.fileKey,
        url: file.url,
        contentType: 'image/png',
        bytes: PNG.length,
      });
      const got = await call(t, w.owner, 'GET', brandUrl(w.org, b.slug));
      assert.deepEqual(got.body, b);
    });

    it('gives each brand a different callback id', async () => {
      const a = await createBrand(t, w.owner, w.org);
      const b = await createBrand(t, w.owner, w.org);
      assert.notEqual(a.oauthCallbackId, b.oauthCallbackId);
    });

    const invalid: Array<[string, Record<string, unknown>, string, string?]> = [
      ['slug too short', { slug: 'ab' }, 'slug', 'invalid_format'],
      ['slug too long', { slug: 'a'.repeat(31) }, 'slug', 'invalid_format'],
      ['slug with upper case', { slug: 'Acme-brand' }, 'slug', 'invalid_format'],
      ['slug with a dot', { slug: 'acme.brand' }, 'slug', 'invalid_format'],
      ['empty name', { name: '' }, 'name', 'too_short'],
      ['name over 80', { name: 'x'.repeat(81) }, 'name', 'too_long'],
      ['colour without #', { primaryColor: '00aaff' }, 'primaryColor', 'invalid_format'],
      ['colour of 4 digits', { primaryColor: '#00af' }, 'primaryColor', 'invalid_format'],
      ['colour not hex', { primaryColor: '#ggg' }, 'primaryColor', 'invalid_format'],
      ['bad email', { supportEmail: 'not-an-email' }, 'supportEmail', 'invalid_format'],
      [
        'http privacy URL',
        { privacyPolicyUrl: 'http://acme.example/p' },
        'privacyPolicyUrl',
        'invalid_format',
      ],
      ['terms not a URL', { termsUrl: 'https://' }, 'termsUrl', 'invalid_format'],
      [
        'terms URL with credentials',
        { termsUrl: 'https://u:p@acme.example/t' },
        'termsUrl',
        'invalid_format',
      ],
      ['unknown logo file', { logoFile: 'file_doesnotexist' }, 'logoFile', 'not_found'],
      ['unknown provider', { providerOrder: ['solana', 'myspace'] }, 'providerOrder.1', 'invalid_value'],
      ['duplicate provider', { providerOrder: ['solana', 'solana'] }, 'providerOrder', 'duplicate'],
      [
        'oauthCallbackId chosen by the client',
        { oauthCallbackId: 'mine' },
        'oauthCallbackId',
        'unknown_field',
      ],
    ];
    for (const [what, fields, field, code] of invalid) {
      it(`refuses ${what} with 400 validation_failed`, async () => {
        const res = await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, {
          slug: slug(),
          name: 'Brand',
          ...fields,
        });
        expect400(res, field, code);
      });
    }

    it('requires slug and name', async () => {
      expect400(await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, { name: 'x' }), 'slug', 'required');
      expect400(
        await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, { slug: slug() }),
        'name',
        'required',
      );
    });

    it('refuses a slug already used in the org with 409, and in any other org too (the slug is the token audience)', async () => {
      const b = await createBrand(t, w.owner, w.org);
      expect409(await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, { slug: b.slug, name: 'Again' }));
      const other = await call(t, w.otherOwner, 'POST', `${orgUrl(w.otherOrg)}/brands`, {
        slug: b.slug,
        name: 'Impostor',
      });
      expect409(other);
      assert.equal(other.body.error.details.constraint, 'brands_slug_key');
    });

    it('keeps a deleted brand slug taken, in its org and in every other', async () => {
      const b = await createBrand(t, w.owner, w.org);
      assert.equal((await call(t, w.owner, 'DELETE', brandUrl(w.org, b.slug))).status, 204);
      expect409(await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, { slug: b.slug, name: 'Again' }));
      expect409(
        await call(t, w.otherOwner, 'POST', `${orgUrl(w.otherOrg)}/brands`, { slug: b.slug, name: 'Again' }),
      );
    });

    it('reserves the slug "console" for the system org', async () => {
      const res = await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, {
        slug: 'console',
        name: 'Fake',
      });
      expect409(res);
      assert.match(res.body.error.message, /reserved/);
      const count = await t.ctx.db
        .selectFrom('brands')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('slug', '=', 'console')
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1);
    });

    it('needs org.brands.edit', async () => {
      const member = await memberWith(t, w.org, ['org.brands.view']);
      expect403(
        await call(t, member, 'POST', `${orgUrl(w.org)}/brands`, { slug: slug(), name: 'X' }),
        'org.brands.edit',
      );
    });

    it('answers 404 to a non-member, and 401 without a token', async () => {
      expect404(await call(t, w.otherOwner, 'POST', `${orgUrl(w.org)}/brands`, { slug: slug(), name: 'X' }));
      const res = await call(t, null, 'POST', `${orgUrl(w.org)}/brands`, { slug: slug(), name: 'X' });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    });
  });

  describe('list and get', () => {
    it('lists the live brands of the org only, with total and pagination', async () => {
      const owner = await createUser(t);
      const org = await seedOrg(t, owner);
      const a = await createBrand(t, owner, org);
      const b = await createBrand(t, owner, org);
      const c = await createBrand(t, owner, org);
      await createBrand(t, w.otherOwner, w.otherOrg);
      await call(t, owner, 'DELETE', brandUrl(org, c.slug));
      const all = await call(t, owner, 'GET', `${orgUrl(org)}/brands`);
      assert.equal(all.status, 200);
      assert.equal(all.body.total, 2);
      assert.deepEqual(all.body.items.map((x: any) => x.slug).sort(), [a.slug, b.slug].sort());
      const page = await call(t, owner, 'GET', `${orgUrl(org)}/brands?limit=1&offset=1`);
      assert.equal(page.body.total, 2);
      assert.equal(page.body.items.length, 1);
      expect400(await call(t, owner, 'GET', `${orgUrl(org)}/brands?limit=0`), 'limit', 'out_of_range');
      expect400(await call(t, owner, 'GET', `${orgUrl(org)}/brands?limit=101`), 'limit', 'out_of_range');
      expect400(await call(t, owner, 'GET', `${orgUrl(org)}/brands?offset=-1`), 'offset', 'out_of_range');
    });

    it('lets a Member (org.brands.view) read, and refuses a role without it', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const member = await createUser(t);
      const { addMember } = await import('../helpers/fixtures.js');
      await addMember(t, w.org, member, 'member');
      assert.equal((await call(t, member, 'GET', `${orgUrl(w.org)}/brands`)).status, 200);
      assert.equal((await call(t, member, 'GET', brandUrl(w.org, b.slug))).status, 200);
      const reader = await memberWith(t, w.org, ['org.read']);
      expect403(await call(t, reader, 'GET', `${orgUrl(w.org)}/brands`), 'org.brands.view');
      expect403(await call(t, reader, 'GET', brandUrl(w.org, b.slug)), 'org.brands.view');
    });

    it("answers 404 for another org's brand, by either org's path", async () => {
      const theirs = await createBrand(t, w.otherOwner, w.otherOrg);
      expect404(await call(t, w.owner, 'GET', brandUrl(w.org, theirs.slug)));
      expect404(await call(t, w.owner, 'GET', brandUrl(w.otherOrg, theirs.slug)));
      expect404(await call(t, w.owner, 'GET', `${orgUrl(w.otherOrg)}/brands`));
      expect404(await call(t, w.owner, 'GET', brandUrl(w.org, 'no-such-brand')));
    });
  });

  describe('update', () => {
    it("takes only the caller's own uploads as a logo, or the logo the brand already has", async () => {
      const mine = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: w.owner.id });
      const theirs = await storeFile(t.ctx.db, t.ctx.config, t.clock, {
        data: PNG,
        ownerUserId: w.otherOwner.id,
      });
      const made = await call(t, w.owner, 'POST', `${orgUrl(w.org)}/brands`, {
        slug: slug(),
        name: 'Brand',
        logoFile: theirs.id,
      });
      expect400(made, 'logoFile', 'not_found');
      const b = await createBrand(t, w.owner, w.org, { logoFile: mine.id });
      expect400(
        await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { logoFile: theirs.id }),
        'logoFile',
        'not_found',
      );
      // Another editor re-saving the brand as the console shows it keeps the logo.
      const editor = await memberWith(t, w.org, ['org.brands.view', 'org.brands.edit']);
      const resaved = await call(t, editor, 'PATCH', brandUrl(w.org, b.slug), {
        name: 'Again',
        logoFile: mine.id,
      });
      assert.equal(resaved.status, 200, resaved.raw);
      assert.equal(resaved.body.logoFile.fileKey, mine.fileKey);
    });

    it('changes fields, clears nullable ones with null, and returns the whole brand', async () => {
      const file = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: w.owner.id });
      const b = await createBrand(t, w.owner, w.org, {
        primaryColor: '#123456',
        supportEmail: 'a@b.example',
        termsUrl: 'https://b.example/t',
        logoFile: file.id,
      });
      t.clock.advance(60);
      const res = await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), {
        name: 'Renamed',
        primaryColor: null,
        supportEmail: null,
        privacyPolicyUrl: 'https://b.example/p',
        termsUrl: null,
        logoFile: null,
        providerOrder: ['discord', 'solana'],
      });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.name, 'Renamed');
      assert.equal(res.body.slug, b.slug);
      assert.equal(res.body.oauthCallbackId, b.oauthCallbackId);
      assert.equal(res.body.privacyPolicyUrl, 'https://b.example/p');
      assert.deepEqual(res.body.providerOrder, ['discord', 'solana']);
      for (const f of ['primaryColor', 'supportEmail', 'termsUrl', 'logoFile'])
        assert.equal(f in res.body, false, f);
      assert.equal(res.body.createdAt, b.createdAt);
      assert.equal(res.body.updatedAt, t.clock.now().toISOString());
      assert.deepEqual((await call(t, w.owner, 'GET', brandUrl(w.org, b.slug))).body, res.body);
      const audit = await auditOf(t, w.org.id, 'brand.updated');
      const entry = audit.find((a) => a.resource_id === b.id);
      assert.ok(entry);
      assert.deepEqual(
        [...(entry.metadata as any).changed].sort(),
        [
          'logoFile',
          'name',
          'primaryColor',
          'privacyPolicyUrl',
          'providerOrder',
          'supportEmail',
          'termsUrl',
        ].sort(),
      );
    });

    it('sets a logo on an existing brand', async () => {
      const file = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: w.owner.id });
      const b = await createBrand(t, w.owner, w.org);
      const res = await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { logoFile: file.id });
      assert.equal(res.status, 200);
      assert.equal(res.body.logoFile.fileKey, file.fileKey);
    });

    it('refuses slug and oauthCallbackId changes with 400', async () => {
      const b = await createBrand(t, w.owner, w.org);
      expect400(
        await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { slug: 'other-slug' }),
        'slug',
        'unknown_field',
      );
      expect400(
        await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { oauthCallbackId: 'x'.repeat(24) }),
        'oauthCallbackId',
        'unknown_field',
      );
    });

    const invalid: Array<[string, Record<string, unknown>, string]> = [
      ['null name', { name: null }, 'name'],
      ['empty name', { name: '' }, 'name'],
      ['bad colour', { primaryColor: 'red' }, 'primaryColor'],
      ['bad email', { supportEmail: 'x@' }, 'supportEmail'],
      ['http URL', { termsUrl: 'http://b.example' }, 'termsUrl'],
      ['unknown logo', { logoFile: 'file_nope' }, 'logoFile'],
      ['null providerOrder', { providerOrder: null }, 'providerOrder'],
      ['unknown provider', { providerOrder: ['aol'] }, 'providerOrder.0'],
    ];
    for (const [what, body, field] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        const b = await createBrand(t, w.owner, w.org);
        expect400(await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), body), field);
      });
    }

    it('needs org.brands.edit and hides other orgs', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const viewer = await memberWith(t, w.org, ['org.brands.view']);
      expect403(await call(t, viewer, 'PATCH', brandUrl(w.org, b.slug), { name: 'x' }), 'org.brands.edit');
      expect404(await call(t, w.otherOwner, 'PATCH', brandUrl(w.org, b.slug), { name: 'x' }));
      expect404(await call(t, w.otherOwner, 'PATCH', brandUrl(w.otherOrg, b.slug), { name: 'x' }));
      assert.equal((await call(t, w.owner, 'GET', brandUrl(w.org, b.slug))).body.name, b.name);
    });
  });

  describe('delete', () => {
    it('soft-deletes the brand and disables its apps and connections', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const app = await call(t, w.owner, 'POST', `${brandUrl(w.org, b.slug)}/apps`, {
        name: 'Web',
        type: 'web',
        redirectUris: ['https://app.example/cb'],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid'],
      });
      assert.equal(app.status, 201, app.raw);
      const conn = await call(t, w.owner, 'PUT', `${brandUrl(w.org, b.slug)}/connections`, {
        type: 'google',
        config: { clientId: 'g-id', clientSecret: 'g-secret-value' },
      });
      assert.equal(conn.status, 201, conn.raw);

      const res = await call(t, w.owner, 'DELETE', brandUrl(w.org, b.slug));
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
      expect404(await call(t, w.owner, 'GET', brandUrl(w.org, b.slug)));
      expect404(await call(t, w.owner, 'GET', `${brandUrl(w.org, b.slug)}/apps/${app.body.clientId}`));
      expect404(await call(t, w.owner, 'DELETE', brandUrl(w.org, b.slug)));

      const brandRow = await t.ctx.db
        .selectFrom('brands')
        .selectAll()
        .where('id', '=', b.id)
        .executeTakeFirstOrThrow();
      assert.ok(brandRow.deleted_at);
      const appRow = await t.ctx.db
        .selectFrom('apps')
        .selectAll()
        .where('client_id', '=', app.body.clientId)
        .executeTakeFirstOrThrow();
      assert.equal(appRow.enabled, false);
      assert.ok(appRow.deleted_at);
      const connRow = await t.ctx.db
        .selectFrom('connections')
        .selectAll()
        .where('brand_id', '=', b.id)
        .executeTakeFirstOrThrow();
      assert.equal(connRow.enabled, false);

      const deleted = await eventsOf(t, w.org.id, 'oidcClient.deleted');
      assert.ok(deleted.some((d) => d.clientId === app.body.clientId && d.brand === b.slug));
      const disabled = await eventsOf(t, w.org.id, 'socialProvider.disabled');
      assert.ok(disabled.some((d) => d.brand === b.slug && d.type === 'google'));
      const audit = await auditOf(t, w.org.id, 'brand.deleted');
      assert.ok(audit.some((a) => a.resource_id === b.id));
    });

    it('needs org.brands.edit and hides other orgs', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const viewer = await memberWith(t, w.org, ['org.brands.view']);
      expect403(await call(t, viewer, 'DELETE', brandUrl(w.org, b.slug)), 'org.brands.edit');
      expect404(await call(t, w.otherOwner, 'DELETE', brandUrl(w.otherOrg, b.slug)));
      assert.equal((await call(t, w.owner, 'GET', brandUrl(w.org, b.slug))).status, 200);
    });
  });

  describe('admin mirror', () => {
    it('serves the routes under /admin with system permissions, not membership', async () => {
      const admin = await createUser(t);
      const b = await createBrand(t, w.owner, w.org);
      const url = `/admin${brandUrl(w.org, b.slug)}`;
      expect403(await call(t, admin, 'GET', url), 'admin.orgs.view');
      await grantSystem(t, admin.id, ['admin.orgs.view']);
      assert.equal((await call(t, admin, 'GET', url)).body.slug, b.slug);
      expect403(await call(t, admin, 'PATCH', url, { name: 'By admin' }), 'admin.orgs.edit');
      await grantSystem(t, admin.id, ['admin.orgs.edit']);
      assert.equal((await call(t, admin, 'PATCH', url, { name: 'By admin' })).body.name, 'By admin');
    });

    it('refuses to delete the console brand', async () => {
      const admin = await createUser(t);
      await grantSystem(t, admin.id, ['admin.orgs.view', 'admin.orgs.edit']);
      const res = await call(t, admin, 'DELETE', '/admin/identity/organizations/system/brands/console');
      assert.equal(res.status, 422, res.raw);
      assert.equal(res.body.error.code, 'unprocessable_entity');
      const got = await call(t, admin, 'GET', '/admin/identity/organizations/system/brands/console');
      assert.equal(got.status, 200);
    });
  });
});

describe('brand route rate limits', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('allows 30 writes per minute per org, then 429 with Retry-After; other orgs are unaffected', async () => {
    const w = await world(t);
    const b = await createBrand(t, w.owner, w.org);
    for (let i = 1; i < 30; i++) {
      const res = await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { name: `n${i}` });
      assert.equal(res.status, 200, `write ${i + 1}`);
    }
    const limited = await call(t, w.owner, 'PATCH', brandUrl(w.org, b.slug), { name: 'one too many' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.headers['ratelimit-limit'], '30');
    // Reads have their own budget, and another org its own.
    assert.equal((await call(t, w.owner, 'GET', brandUrl(w.org, b.slug))).status, 200);
    await createBrand(t, w.otherOwner, w.otherOrg);
  });

  it('allows 60 reads per minute per org', async () => {
    const w = await world(t);
    for (let i = 0; i < 60; i++) {
      assert.equal((await call(t, w.owner, 'GET', `${orgUrl(w.org)}/brands`)).status, 200);
    }
    const limited = await call(t, w.owner, 'GET', `${orgUrl(w.org)}/brands`);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['ratelimit-limit'], '60');
  });
});
