import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/lib/hash.js';
import { findAppByClientId, isAppActive } from '../../src/modules/apps/apps.queries.js';
import { onAppChanged, verifyClientSecret } from '../../src/modules/apps/apps.service.js';
import { buildTestApp, grantSystem, createUser, type TestApp } from '../helpers/app.js';
import {
  auditAndEvents,
  auditOf,
  brandUrl,
  call,
  createBrand,
  eventsOf,
  expect400,
  expect403,
  expect404,
  memberWith,
  type World,
  world,
} from './setup.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

const webApp = (fields: Record<string, unknown> = {}) => ({
  name: 'Web app',
  type: 'web',
  redirectUris: ['https://app.example/callback'],
  allowedGrantTypes: ['authorization_code', 'refresh_token'],
  allowedScopes: ['openid', 'profile', 'offline_access'],
  ...fields,
});

describe('apps', () => {
  let t: TestApp;
  let w: World;
  let brand: any;
  let appsUrl: string;
  const changed: string[] = [];
  let unsubscribe: () => void;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    w = await world(t);
    brand = await createBrand(t, w.owner, w.org);
    appsUrl = `${brandUrl(w.org, brand.slug)}/apps`;
    const scope = await call(t, w.owner, 'POST', `${brandUrl(w.org, brand.slug)}/scopes`, {
      name: 'orders:read',
      description: 'Read your orders',
    });
    assert.equal(scope.status, 201, scope.raw);
    unsubscribe = onAppChanged(t.ctx, (clientId) => changed.push(clientId));
  });
  after(async () => {
    unsubscribe();
    await t.close();
  });

  async function create(fields: Record<string, unknown> = {}) {
    const res = await call(t, w.owner, 'POST', appsUrl, webApp(fields));
    assert.equal(res.status, 201, res.raw);
    return res.body;
  }

  describe('create', () => {
    it('creates a confidential web app, returns the secret once and stores only its SHA-256', async () => {
      const res = await call(t, w.owner, 'POST', appsUrl, webApp({ description: 'Main site' }));
      assert.equal(res.status, 201, res.raw);
      const a = res.body;
      assert.match(a.id, /^app_/);
      assert.match(a.clientId, /^[A-Za-z0-9]{24}$/);
      assert.equal(a.brand, brand.slug);
      assert.equal(a.org, w.org.id);
      assert.equal(a.type, 'web');
      assert.equal(a.isConfidential, true);
      assert.equal(a.enabled, true);
      assert.equal(a.description, 'Main site');
      assert.deepEqual(a.redirectUris, ['https://app.example/callback']);
      assert.deepEqual(a.allowedGrantTypes, ['authorization_code', 'refresh_token']);
      assert.deepEqual(a.allowedScopes, ['openid', 'profile', 'offline_access']);
      assert.equal(typeof a.clientSecret, 'string');
      assert.ok(a.clientSecret.length >= 43);
      assert.equal(res.headers['cache-control'], 'no-store');

      const row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.ok(row);
      assert.equal(row.client_secret_hash, sha256(a.clientSecret));
      assert.ok(!JSON.stringify(row).includes(a.clientSecret));
      assert.equal(row.brand_slug, brand.slug);
      assert.equal(row.org_slug, w.org.slug);
      assert.equal(row.brand_deleted_at, null);
      assert.equal(row.org_deleted_at, null);
      assert.equal(isAppActive(row), true);
      assert.equal(verifyClientSecret(row, a.clientSecret), true);
      assert.equal(verifyClientSecret(row, `${a.clientSecret}x`), false);

      const [event] = (await eventsOf(t, w.org.id, 'oidcClient.created')).filter(
        (e) => e.clientId === a.clientId,
      );
      assert.deepEqual(event, {
        clientId: a.clientId,
        brand: brand.slug,
        name: 'Web app',
        type: 'web',
        isConfidential: true,
        redirectUris: a.redirectUris,
        allowedGrantTypes: a.allowedGrantTypes,
        allowedScopes: a.allowedScopes,
      });
      const audit = await auditOf(t, w.org.id, 'app.created');
      assert.ok(audit.some((e) => e.resource_id === a.id && e.actor_user_id === w.owner.id));
    });

    it('defaults isConfidential by type: true for web and m2m, false for spa, native and agent', async () => {
      const m2m = await create({
        type: 'm2m',
        redirectUris: [],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders:read'],
      });
      assert.equal(m2m.isConfidential, true);
      assert.equal(typeof m2m.clientSecret, 'string');
      for (const type of ['spa', 'native', 'agent']) {
        const a = await create({ type, allowedGrantTypes: ['authorization_code'] });
        assert.equal(a.isConfidential, false, type);
        assert.equal('clientSecret' in a, false, type);
        const row = await findAppByClientId(t.ctx.db, a.clientId);
        assert.equal(row?.client_secret_hash, null);
      }
    });

    it('honours an explicit isConfidential', async () => {
      const agent = await create({
        type: 'agent',
        isConfidential: true,
        allowedGrantTypes: ['client_credentials'],
      });
      assert.equal(agent.isConfidential, true);
      assert.ok(agent.clientSecret);
      const web = await create({ isConfidential: false });
      assert.equal(web.isConfidential, false);
      assert.equal('clientSecret' in web, false);
    });

    it('accepts loopback and private-use redirect URIs for native apps (RFC 8252)', async () => {
      const uris = [
        'http://127.0.0.1:8123/callback',
        'http://[::1]:8123/callback',
        'com.example.app:/oauth2redirect',
        'https://app.example/native',
      ];
      const a = await create({
        type: 'native',
        redirectUris: uris,
        allowedGrantTypes: ['authorization_code'],
      });
      assert.deepEqual(a.redirectUris, uris);
    });

    it('allows no redirect URIs without authorization_code (device flow)', async () => {
      const a = await create({
        type: 'native',
        redirectUris: undefined,
        allowedGrantTypes: [DEVICE, 'refresh_token'],
      });
      assert.deepEqual(a.redirectUris, []);
    });

    const invalid: Array<[string, Record<string, unknown>, string, string?]> = [
      ['a missing name', { name: undefined }, 'name', 'required'],
      ['an empty name', { name: '' }, 'name', 'too_short'],
      ['a name over 80', { name: 'x'.repeat(81) }, 'name', 'too_long'],
      ['an unknown type', { type: 'desktop' }, 'type', 'invalid_value'],
      ['a non-boolean isConfidential', { isConfidential: 'yes' }, 'isConfidential', 'invalid_type'],
      [
        'an http redirect URI',
        { redirectUris: ['http://app.example/cb'] },
        'redirectUris.0',
        'invalid_format',
      ],
      ['a redirect URI with a fragment', { redirectUris: ['https://app.example/cb#x'] }, 'redirectUris.0'],
      ['a relative redirect URI', { redirectUris: ['/callback'] }, 'redirectUris.0'],
      ['a redirect URI with credentials', { redirectUris: ['https://u:p@app.example/cb'] }, 'redirectUris.0'],
      ['a redirect URI with spaces', { redirectUris: ['https://app.example/a b'] }, 'redirectUris.0'],
      [
        'a loopback-like host for a web app',
        { redirectUris: ['http://127.0.0.2:3000/cb'] },
        'redirectUris.0',
      ],
      [
        'a private-use scheme for a spa',
        { type: 'spa', redirectUris: ['com.example.app:/cb'] },
        'redirectUris.0',
      ],
      [
        'http://localhost.example for a native app',
        { type: 'native', redirectUris: ['http://localhost.example:3000/cb'] },
        'redirectUris.0',
      ],
      [
        'a dotless custom scheme for a native app',
        { type: 'native', redirectUris: ['myapp:/cb'] },
        'redirectUris.0',
      ],
      [
        'javascript: for a native app',
        { type: 'native', redirectUris: ['javascript:alert(1)'] },
        'redirectUris.0',
      ],
      [
        'duplicate redirect URIs',
        { redirectUris: ['https://a.example/cb', 'https://a.example/cb'] },
        'redirectUris',
        'duplicate',
      ],
      ['no redirect URI with authorization_code', { redirectUris: [] }, 'redirectUris', 'required'],
      ['missing allowedGrantTypes', { allowedGrantTypes: undefined }, 'allowedGrantTypes', 'required'],
      ['empty allowedGrantTypes', { allowedGrantTypes: [] }, 'allowedGrantTypes', 'too_few'],
      ['an unknown grant type', { allowedGrantTypes: ['password'] }, 'allowedGrantTypes.0', 'invalid_value'],
      [
        'duplicate grant types',
        { allowedGrantTypes: ['authorization_code', 'authorization_code'] },
        'allowedGrantTypes',
        'duplicate',
      ],
      [
        'client_credentials for a public client',
        { type: 'spa', allowedGrantTypes: ['client_credentials'] },
        'allowedGrantTypes',
        'invalid_value',
      ],
      [
        'an m2m app with authorization_code',
        { type: 'm2m', allowedGrantTypes: ['client_credentials', 'authorization_code'] },
        'allowedGrantTypes',
        'invalid_value',
      ],
      [
        'an m2m app without client_credentials',
        { type: 'm2m', allowedGrantTypes: [DEVICE] },
        'allowedGrantTypes',
      ],
      [
        'refresh_token alone',
        { allowedGrantTypes: ['refresh_token', 'client_credentials'] },
        'allowedGrantTypes',
        'invalid_value',
      ],
      ['missing allowedScopes', { allowedScopes: undefined }, 'allowedScopes', 'required'],
      ['an unknown scope', { allowedScopes: ['openid', 'orders:write'] }, 'allowedScopes', 'unknown_scope'],
      ['duplicate scopes', { allowedScopes: ['openid', 'openid'] }, 'allowedScopes', 'duplicate'],
      ['a description over 500', { description: 'd'.repeat(501) }, 'description', 'too_long'],
      ['an unknown field', { clientId: 'chosen' }, 'clientId', 'unknown_field'],
      ['a client-chosen secret', { clientSecret: 'chosen' }, 'clientSecret', 'unknown_field'],
    ];
    for (const [what, fields, field, code] of invalid) {
      it(`refuses ${what} with 400 validation_failed`, async () => {
        const res = await call(t, w.owner, 'POST', appsUrl, webApp(fields));
        expect400(res, field, code);
      });
    }

    it('names the unknown scope in the error', async () => {
      const res = await call(
        t,
        w.owner,
        'POST',
        appsUrl,
        webApp({ allowedScopes: ['openid', 'orders:write'] }),
      );
      expect400(res, 'allowedScopes');
      assert.match(JSON.stringify(res.body.error.details.fields), /orders:write/);
    });

    it("refuses another brand's scopes", async () => {
      const other = await createBrand(t, w.owner, w.org);
      const res = await call(
        t,
        w.owner,
        'POST',
        `${brandUrl(w.org, other.slug)}/apps`,
        webApp({ allowedScopes: ['orders:read'] }),
      );
      expect400(res, 'allowedScopes', 'unknown_scope');
    });

    it('needs org.apps.edit; another org and an unknown brand are 404', async () => {
      const viewer = await memberWith(t, w.org, ['org.apps.view', 'org.brands.view']);
      expect403(await call(t, viewer, 'POST', appsUrl, webApp()), 'org.apps.edit');
      expect404(await call(t, w.otherOwner, 'POST', appsUrl, webApp()));
      expect404(await call(t, w.otherOwner, 'POST', `${brandUrl(w.otherOrg, brand.slug)}/apps`, webApp()));
      expect404(await call(t, w.owner, 'POST', `${brandUrl(w.org, 'no-such-brand')}/apps`, webApp()));
    });
  });

  describe('read', () => {
    it('lists and gets apps without any secret', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const url = `${brandUrl(w.org, b.slug)}/apps`;
      const one = await call(t, w.owner, 'POST', url, webApp());
      const two = await call(t, w.owner, 'POST', url, webApp({ name: 'Second' }));
      const list = await call(t, w.owner, 'GET', url);
      assert.equal(list.status, 200);
      assert.equal(list.body.total, 2);
      assert.deepEqual(
        list.body.items.map((a: any) => a.clientId).sort(),
        [one.body.clientId, two.body.clientId].sort(),
      );
      const got = await call(t, w.owner, 'GET', `${url}/${one.body.clientId}`);
      assert.equal(got.status, 200);
      const { clientSecret, ...rest } = one.body;
      assert.deepEqual(got.body, rest);
      for (const raw of [list.raw, got.raw]) {
        assert.ok(!raw.includes(clientSecret));
        assert.ok(!raw.includes(two.body.clientSecret));
        assert.ok(!/secret/i.test(raw));
      }
      const page = await call(t, w.owner, 'GET', `${url}?limit=1&offset=1`);
      assert.equal(page.body.items.length, 1);
      assert.equal(page.body.total, 2);
      expect400(await call(t, w.owner, 'GET', `${url}?limit=0`), 'limit');
    });

    it('lets a Member read (org.apps.view) and refuses a role without it', async () => {
      const a = await create();
      const reader = await memberWith(t, w.org, ['org.brands.view']);
      expect403(await call(t, reader, 'GET', appsUrl), 'org.apps.view');
      expect403(await call(t, reader, 'GET', `${appsUrl}/${a.clientId}`), 'org.apps.view');
      const viewer = await memberWith(t, w.org, ['org.apps.view']);
      assert.equal((await call(t, viewer, 'GET', `${appsUrl}/${a.clientId}`)).status, 200);
    });

    it("answers 404 for another org's app and for an app under another brand", async () => {
      const a = await create();
      const other = await createBrand(t, w.owner, w.org);
      expect404(await call(t, w.owner, 'GET', `${brandUrl(w.org, other.slug)}/apps/${a.clientId}`));
      expect404(await call(t, w.otherOwner, 'GET', `${appsUrl}/${a.clientId}`));
      const theirBrand = await createBrand(t, w.otherOwner, w.otherOrg);
      expect404(
        await call(t, w.otherOwner, 'GET', `${brandUrl(w.otherOrg, theirBrand.slug)}/apps/${a.clientId}`),
      );
      expect404(await call(t, w.owner, 'GET', `${appsUrl}/nosuchclient`));
    });
  });

  describe('update', () => {
    it('changes fields, returns the whole app and records only the changed fields', async () => {
      const a = await create();
      changed.length = 0;
      t.clock.advance(30);
      const res = await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, {
        name: 'Renamed',
        description: 'now described',
        redirectUris: ['https://app.example/callback', 'https://app.example/other'],
        allowedScopes: ['openid', 'orders:read'],
        allowedGrantTypes: ['authorization_code', 'refresh_token'],
      });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.name, 'Renamed');
      assert.equal(res.body.description, 'now described');
      assert.deepEqual(res.body.allowedScopes, ['openid', 'orders:read']);
      assert.equal(res.body.updatedAt, t.clock.now().toISOString());
      assert.equal('clientSecret' in res.body, false);
      const [event] = (await eventsOf(t, w.org.id, 'oidcClient.updated')).filter(
        (e) => e.clientId === a.clientId,
      );
      assert.deepEqual(event, {
        clientId: a.clientId,
        before: {
          name: 'Web app',
          description: null,
          redirectUris: ['https://app.example/callback'],
          allowedScopes: ['openid', 'profile', 'offline_access'],
        },
        after: {
          name: 'Renamed',
          description: 'now described',
          redirectUris: ['https://app.example/callback', 'https://app.example/other'],
          allowedScopes: ['openid', 'orders:read'],
        },
      });
      assert.deepEqual(changed, [a.clientId]);
      const cleared = await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { description: null });
      assert.equal(cleared.body.description, null);
    });

    it('disables and re-enables an app; disabling also fires oidcClient.deleted', async () => {
      const a = await create();
      const off = await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { enabled: false });
      assert.equal(off.status, 200);
      assert.equal(off.body.enabled, false);
      let row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.equal(isAppActive(row!), false);
      assert.ok((await eventsOf(t, w.org.id, 'oidcClient.deleted')).some((e) => e.clientId === a.clientId));
      const on = await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { enabled: true });
      assert.equal(on.body.enabled, true);
      row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.equal(isAppActive(row!), true);
      const updates = (await eventsOf(t, w.org.id, 'oidcClient.updated')).filter(
        (e) => e.clientId === a.clientId,
      );
      assert.deepEqual(
        updates.map((u) => u.after),
        [{ enabled: false }, { enabled: true }],
      );
    });

    it('records nothing when nothing changes', async () => {
      const a = await create();
      changed.length = 0;
      const res = await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { name: 'Web app' });
      assert.equal(res.status, 200);
      assert.equal(
        (await eventsOf(t, w.org.id, 'oidcClient.updated')).filter((e) => e.clientId === a.clientId).length,
        0,
      );
      assert.deepEqual(changed, []);
    });

    const invalid: Array<[string, Record<string, unknown>, string, string?]> = [
      ['type changes', { type: 'spa' }, 'type', 'unknown_field'],
      ['isConfidential changes', { isConfidential: false }, 'isConfidential', 'unknown_field'],
      ['clientId changes', { clientId: 'x' }, 'clientId', 'unknown_field'],
      ['an empty name', { name: '' }, 'name', 'too_short'],
      ['a null name', { name: null }, 'name'],
      ['a non-boolean enabled', { enabled: 'no' }, 'enabled', 'invalid_type'],
      [
        'removing every redirect URI while authorization_code is allowed',
        { redirectUris: [] },
        'redirectUris',
        'required',
      ],
      ['an http redirect URI', { redirectUris: ['http://app.example/cb'] }, 'redirectUris.0'],
      ['refresh_token without a user grant', { allowedGrantTypes: ['refresh_token'] }, 'allowedGrantTypes'],
      ['an unknown scope', { allowedScopes: ['nope:nope'] }, 'allowedScopes', 'unknown_scope'],
    ];
    for (const [what, body, field, code] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        const a = await create();
        expect400(await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, body), field, code);
      });
    }

    it('checks grant rules against the stored type: a public app cannot gain client_credentials', async () => {
      const a = await create({ type: 'spa' });
      expect400(
        await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, {
          allowedGrantTypes: ['client_credentials'],
        }),
        'allowedGrantTypes',
        'invalid_value',
      );
    });

    it('needs org.apps.edit and hides other orgs and brands', async () => {
      const a = await create();
      const viewer = await memberWith(t, w.org, ['org.apps.view']);
      expect403(await call(t, viewer, 'PATCH', `${appsUrl}/${a.clientId}`, { name: 'x' }), 'org.apps.edit');
      expect404(await call(t, w.otherOwner, 'PATCH', `${appsUrl}/${a.clientId}`, { name: 'x' }));
      const other = await createBrand(t, w.owner, w.org);
      expect404(
        await call(t, w.owner, 'PATCH', `${brandUrl(w.org, other.slug)}/apps/${a.clientId}`, { name: 'x' }),
      );
    });
  });

  describe('rotate-secret', () => {
    it('returns a new secret once; the old one stops matching at once', async () => {
      const a = await create();
      changed.length = 0;
      const res = await call(t, w.owner, 'POST', `${appsUrl}/${a.clientId}/rotate-secret`);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(Object.keys(res.body), ['clientSecret']);
      assert.notEqual(res.body.clientSecret, a.clientSecret);
      assert.equal(res.headers['cache-control'], 'no-store');
      const row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.equal(verifyClientSecret(row!, a.clientSecret), false);
      assert.equal(verifyClientSecret(row!, res.body.clientSecret), true);
      const events = (await eventsOf(t, w.org.id, 'oidcClient.secret.rotated')).filter(
        (e) => e.clientId === a.clientId,
      );
      assert.deepEqual(events, [{ clientId: a.clientId }]);
      assert.deepEqual(changed, [a.clientId]);
      const got = await call(t, w.owner, 'GET', `${appsUrl}/${a.clientId}`);
      assert.ok(!got.raw.includes(res.body.clientSecret));
    });

    it('answers 422 for a public app, which has no secret', async () => {
      const a = await create({ type: 'spa' });
      const res = await call(t, w.owner, 'POST', `${appsUrl}/${a.clientId}/rotate-secret`);
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, 'unprocessable_entity');
    });

    it('needs org.apps.edit and hides other orgs', async () => {
      const a = await create();
      const viewer = await memberWith(t, w.org, ['org.apps.view']);
      expect403(await call(t, viewer, 'POST', `${appsUrl}/${a.clientId}/rotate-secret`), 'org.apps.edit');
      expect404(await call(t, w.otherOwner, 'POST', `${appsUrl}/${a.clientId}/rotate-secret`));
      const row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.equal(verifyClientSecret(row!, a.clientSecret), true);
    });
  });

  describe('delete', () => {
    it('soft-disables the app: 204, gone from the API, inactive for the issuer', async () => {
      const a = await create();
      changed.length = 0;
      const res = await call(t, w.owner, 'DELETE', `${appsUrl}/${a.clientId}`);
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
      expect404(await call(t, w.owner, 'GET', `${appsUrl}/${a.clientId}`));
      expect404(await call(t, w.owner, 'DELETE', `${appsUrl}/${a.clientId}`));
      expect404(await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { enabled: true }));
      const list = await call(t, w.owner, 'GET', appsUrl);
      assert.ok(!list.body.items.some((x: any) => x.clientId === a.clientId));
      const row = await findAppByClientId(t.ctx.db, a.clientId);
      assert.equal(row?.enabled, false);
      assert.ok(row?.deleted_at);
      assert.equal(isAppActive(row!), false);
      const events = (await eventsOf(t, w.org.id, 'oidcClient.deleted')).filter(
        (e) => e.clientId === a.clientId,
      );
      assert.deepEqual(events, [{ clientId: a.clientId, brand: brand.slug }]);
      assert.deepEqual(changed, [a.clientId]);
    });

    it('needs org.apps.edit and hides other orgs', async () => {
      const a = await create();
      const viewer = await memberWith(t, w.org, ['org.apps.view']);
      expect403(await call(t, viewer, 'DELETE', `${appsUrl}/${a.clientId}`), 'org.apps.edit');
      expect404(await call(t, w.otherOwner, 'DELETE', `${appsUrl}/${a.clientId}`));
      assert.equal((await call(t, w.owner, 'GET', `${appsUrl}/${a.clientId}`)).status, 200);
    });

    it('tells listeners about every app of a deleted brand', async () => {
      const b = await createBrand(t, w.owner, w.org);
      const url = `${brandUrl(w.org, b.slug)}/apps`;
      const one = (await call(t, w.owner, 'POST', url, webApp())).body;
      const two = (await call(t, w.owner, 'POST', url, webApp())).body;
      changed.length = 0;
      assert.equal((await call(t, w.owner, 'DELETE', brandUrl(w.org, b.slug))).status, 204);
      assert.deepEqual([...changed].sort(), [one.clientId, two.clientId].sort());
      const row = await findAppByClientId(t.ctx.db, one.clientId);
      assert.ok(row?.brand_deleted_at);
      assert.equal(isAppActive(row!), false);
    });
  });

  it('refuses to change or delete the first-party console app', async () => {
    const admin = await createUser(t);
    await grantSystem(t, admin.id, ['admin.orgs.view', 'admin.orgs.edit']);
    const url = '/admin/identity/organizations/system/brands/console/apps/console';
    assert.equal((await call(t, admin, 'GET', url)).body.clientId, 'console');
    for (const [method, body] of [
      ['PATCH', { enabled: false }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(t, admin, method, url, body);
      assert.equal(res.status, 422, `${method} ${res.raw}`);
    }
    const row = await findAppByClientId(t.ctx.db, 'console');
    assert.equal(isAppActive(row!), true);
  });

  it('never writes a client secret to the audit log or events', async () => {
    const a = await create();
    const rotated = await call(t, w.owner, 'POST', `${appsUrl}/${a.clientId}/rotate-secret`);
    await call(t, w.owner, 'PATCH', `${appsUrl}/${a.clientId}`, { name: 'After rotation' });
    await call(t, w.owner, 'DELETE', `${appsUrl}/${a.clientId}`);
    const all = await auditAndEvents(t, w.org.id);
    assert.ok(all.includes(a.clientId));
    for (const secret of [a.clientSecret, rotated.body.clientSecret]) {
      assert.ok(!all.includes(secret));
      assert.ok(!all.includes(sha256(secret)));
    }
  });
});
