import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaults } from '../../src/config/defaults.js';
import { newId } from '../../src/lib/ids.js';
import { storeFile } from '../../src/modules/files/files.service.js';
import { onOrgDeleted } from '../../src/modules/orgs/orgs.service.js';
import { consoleToken, createUser, grantSystem, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember } from '../helpers/fixtures.js';
import {
  assertError,
  assertFieldError,
  auditRows,
  buildOrgsTestApp,
  builtInRoles,
  createOrgViaApi,
  eventRows,
  randomSlug,
  recordCounts,
} from './helpers.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** Org ids whose deletion a test handler makes fail, to prove the deletion is one transaction. */
const failDeletionOf = new Set<string>();
const disabledByHandler: string[] = [];
onOrgDeleted(async (trx, orgId) => {
  // Runs inside the deletion's transaction: the org row is already marked deleted here.
  const row = await trx
    .selectFrom('orgs')
    .select('deleted_at')
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  assert.ok(row.deleted_at);
  if (failDeletionOf.has(orgId)) throw new Error('handler failure');
  disabledByHandler.push(orgId);
});

describe('organizations', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  before(async () => {
    t = await buildOrgsTestApp();
    owner = await createUser(t);
    other = await createUser(t);
  });
  after(() => t.close());

  describe('POST /identity/organizations', () => {
    it('creates an org whose creator is its Owner, with audit entries and a member.added event', async () => {
      const slug = randomSlug();
      const res = await t.app.inject({
        method: 'POST',
        url: '/identity/organizations',
        headers: owner.auth,
        payload: { name: 'Acme', slug, description: 'Widgets' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const org = json(res);
      assert.match(org.id, /^org_/);
      assert.equal(org.name, 'Acme');
      assert.equal(org.slug, slug);
      assert.equal(org.description, 'Widgets');
      assert.equal(org.createdBy, owner.id);
      assert.equal(org.paymentProductId, null);
      assert.equal(org.createdAt, t.clock.now().toISOString());
      assert.equal(org.updatedAt, org.createdAt);
      assert.deepEqual(Object.keys(org).sort(), [
        'createdAt',
        'createdBy',
        'description',
        'id',
        'name',
        'paymentProductId',
        'slug',
        'updatedAt',
      ]);

      const members = json(
        await t.app.inject({ url: `/identity/organizations/${slug}/members`, headers: owner.auth }),
      );
      assert.equal(members.total, 1);
      assert.equal(members.items[0].userId, owner.id);
      assert.deepEqual(
        members.items[0].roles.map((r: { name: string }) => r.name),
        ['Owner'],
      );

      const audit = await auditRows(t, org.id);
      assert.deepEqual(
        // Both entries carry the same timestamp; their order among themselves is not defined.
        audit.map((a) => [a.action, a.resource_type, a.resource_id, a.actor_user_id]).sort(),
        [
          ['member.added', 'member', owner.id, owner.id],
          ['org.created', 'org', org.id, owner.id],
        ],
      );
      const events = await eventRows(t, org.id);
      assert.deepEqual(
        events.map((e) => [e.type, e.data]),
        [['member.added', { user: owner.id, roles: ['Owner'] }]],
      );
    });

    it('creates the built-in roles Owner, Admin and Member', async () => {
      const org = await createOrgViaApi(t, owner);
      const roles = json(
        await t.app.inject({ url: `/identity/organizations/${org.slug}/roles`, headers: owner.auth }),
      );
      assert.deepEqual(
        roles.items.map((r: { name: string; isBuiltIn: boolean }) => [r.name, r.isBuiltIn]),
        [
          ['Owner', true],
          ['Admin', true],
          ['Member', true],
        ],
      );
    });

    it('refuses a taken slug with 409 conflict', async () => {
      const org = await createOrgViaApi(t, owner);
      const res = await t.app.inject({
        method: 'POST',
        url: '/identity/organizations',
        headers: other.auth,
        payload: { name: 'Copycat', slug: org.slug },
      });
      assertError(res, 409, 'conflict');
    });

    it('validates every field', async () => {
      const post = (payload: Record<string, unknown>) =>
        t.app.inject({ method: 'POST', url: '/identity/organizations', headers: owner.auth, payload });
      const slug = randomSlug();
      assertFieldError(await post({ slug }), 'name', 'required');
      assertFieldError(await post({ name: 'x' }), 'slug', 'required');
      assertFieldError(await post({ name: '', slug }), 'name', 'too_short');
      assertFieldError(await post({ name: 'x'.repeat(81), slug }), 'name', 'too_long');
      assertFieldError(await post({ name: 'x', slug: 'ab' }), 'slug', 'invalid_format');
      assertFieldError(await post({ name: 'x', slug: 'a'.repeat(31) }), 'slug', 'invalid_format');
      assertFieldError(await post({ name: 'x', slug: 'Upper-case' }), 'slug', 'invalid_format');
      assertFieldError(await post({ name: 'x', slug: 'under_score' }), 'slug', 'invalid_format');
      assertFieldError(
        await post({ name: 'x', slug, description: 'd'.repeat(501) }),
        'description',
        'too_long',
      );
      assertFieldError(await post({ name: 'x', slug, tier: 'authority' }), 'tier', 'unknown_field');
      assertFieldError(await post({ name: 42, slug }), 'name', 'invalid_type');
      // Boundaries that are valid.
      const ok = await post({
        name: 'x'.repeat(80),
        slug: `a${'b'.repeat(29)}`,
        description: 'd'.repeat(500),
      });
      assert.equal(ok.statusCode, 201, ok.body);
    });

    it('requires authentication', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/identity/organizations',
        payload: { name: 'x', slug: randomSlug() },
      });
      assertError(res, 401, 'unauthorized');
    });
  });

  describe('GET /identity/organizations', () => {
    it("lists only the caller's orgs, with total and paging", async () => {
      const lister = await createUser(t);
      const mine = [];
      for (let i = 0; i < 3; i++) {
        mine.push(await createOrgViaApi(t, lister));
        t.clock.advance(1);
      }
      await createOrgViaApi(t, other);
      const all = json(await t.app.inject({ url: '/identity/organizations', headers: lister.auth }));
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.items.map((o: { id: string }) => o.id),
        mine.map((o) => o.id).reverse(),
      );
      const page = json(
        await t.app.inject({ url: '/identity/organizations?limit=1&offset=1', headers: lister.auth }),
      );
      assert.equal(page.total, 3);
      assert.deepEqual(
        page.items.map((o: { id: string }) => o.id),
        [mine[1].id],
      );
    });

    it('lists every org for a holder of admin.orgs.view', async () => {
      const admin = await createUser(t);
      await grantSystem(t, admin.id, ['admin.orgs.view']);
      const res = json(await t.app.inject({ url: '/identity/organizations?limit=100', headers: admin.auth }));
      const count = await t.ctx.db
        .selectFrom('orgs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      assert.equal(res.total, Number(count.n));
      assert.ok(res.items.some((o: { slug: string }) => o.slug === 'system'));
    });

    it('refuses limits out of range instead of clamping them', async () => {
      const get = (qs: string) => t.app.inject({ url: `/identity/organizations?${qs}`, headers: owner.auth });
      assertFieldError(await get('limit=0'), 'limit', 'out_of_range');
      assertFieldError(await get('limit=101'), 'limit', 'out_of_range');
      assertFieldError(await get('offset=-1'), 'offset', 'out_of_range');
      assertFieldError(await get('limit=abc'), 'limit', 'invalid_type');
      assert.equal((await get('limit=100')).statusCode, 200);
    });

    it('requires authentication', async () => {
      assertError(await t.app.inject({ url: '/identity/organizations' }), 401, 'unauthorized');
    });
  });

  describe('GET /identity/organizations/:orgSlug', () => {
    it('returns the org to a member', async () => {
      const org = await createOrgViaApi(t, owner);
      const member = await createUser(t);
      await addMember(t, { ...org, roles: await builtInRoles(t, org.id) }, member, 'member');
      const res = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: member.auth });
      assert.equal(res.statusCode, 200);
      assert.equal(json(res).id, org.id);
    });

    it('is 404 for a non-member and for an unknown slug, leaking nothing', async () => {
      const org = await createOrgViaApi(t, owner);
      const res = await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: other.auth });
      const err = assertError(res, 404, 'not_found');
      assert.ok(!JSON.stringify(err).includes(org.id));
      assertError(
        await t.app.inject({ url: '/identity/organizations/no-such-org', headers: owner.auth }),
        404,
        'not_found',
      );
    });
  });

  describe('PATCH /identity/organizations/:orgSlug', () => {
    it('updates name, description and icon, and audits the change', async () => {
      const org = await createOrgViaApi(t, owner, { description: 'before' });
      const file = await storeFile(t.ctx.db, t.ctx.config, t.clock, { data: PNG, ownerUserId: owner.id });
      t.clock.advance(10);
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
        payload: { name: 'Renamed', iconFile: file.id },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.name, 'Renamed');
      assert.equal(body.description, 'before');
      assert.equal(body.slug, org.slug);
      assert.deepEqual(body.iconFile, {
        fileKey: file.fileKey,
        url: file.url,
        contentType: 'image/png',
        bytes: file.bytes,
      });
      assert.equal(body.updatedAt, t.clock.now().toISOString());

      t.clock.advance(10);
      const cleared = json(
        await t.app.inject({
          method: 'PATCH',
          url: `/identity/organizations/${org.slug}`,
          headers: owner.auth,
          payload: { description: null, iconFile: null },
        }),
      );
      assert.equal(cleared.description, undefined);
      assert.equal(cleared.iconFile, undefined);
      const get = json(
        await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth }),
      );
      assert.deepEqual(get, cleared);

      const updates = (await auditRows(t, org.id)).filter((a) => a.action === 'org.updated');
      assert.equal(updates.length, 2);
      assert.deepEqual(updates[0].metadata, {
        before: { name: org.name, iconFile: null },
        after: { name: 'Renamed', iconFile: file.id },
      });
    });

    it('refuses a slug change, an unknown icon file and bad fields with 400', async () => {
      const org = await createOrgViaApi(t, owner);
      const patch = (payload: Record<string, unknown>) =>
        t.app.inject({
          method: 'PATCH',
          url: `/identity/organizations/${org.slug}`,
          headers: owner.auth,
          payload,
        });
      const before = await recordCounts(t, org.id);
      assertFieldError(await patch({ slug: 'new-slug' }), 'slug', 'unknown_field');
      assertFieldError(await patch({ iconFile: 'file_doesnotexist' }), 'iconFile', 'not_found');
      const theirs = await storeFile(t.ctx.db, t.ctx.config, t.clock, {
        data: PNG,
        ownerUserId: (await createUser(t)).id,
      });
      assertFieldError(await patch({ iconFile: theirs.id }), 'iconFile', 'not_found');
      assertFieldError(await patch({ name: '' }), 'name', 'too_short');
      assertFieldError(await patch({ name: 'x'.repeat(81) }), 'name', 'too_long');
      assertFieldError(await patch({ description: 'd'.repeat(501) }), 'description', 'too_long');
      assertError(await patch({}), 400, 'validation_failed');
      assert.deepEqual(await recordCounts(t, org.id), before);
      const get = json(
        await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth }),
      );
      assert.equal(get.slug, org.slug);
      assert.equal(get.name, org.name);
    });

    it('needs org.edit (403 with details.missing) and is 404 to outsiders', async () => {
      const org = await createOrgViaApi(t, owner);
      const member = await createUser(t);
      await addMember(t, { ...org, roles: await builtInRoles(t, org.id) }, member, 'member');
      const asMember = await t.app.inject({
        method: 'PATCH',
        url: `/identity/organizations/${org.slug}`,
        headers: member.auth,
        payload: { name: 'Hijacked' },
      });
      assert.deepEqual(assertError(asMember, 403, 'forbidden').details.missing, ['org.edit']);
      const asOutsider = await t.app.inject({
        method: 'PATCH',
        url: `/identity/organizations/${org.slug}`,
        headers: other.auth,
        payload: { name: 'Hijacked' },
      });
      assertError(asOutsider, 404, 'not_found');
      const get = json(
        await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth }),
      );
      assert.equal(get.name, org.name);
    });
  });

  describe('DELETE /identity/organizations/:orgSlug', () => {
    async function orgWithChildren(user: TestUser) {
      const org = await createOrgViaApi(t, user);
      const now = t.clock.now();
      const brandId = newId('brand_');
      await t.ctx.db
        .insertInto('brands')
        .values({
          id: brandId,
          org_id: org.id,
          // Brand slugs are unique across the service: one per org here.
          slug: `main-${org.slug}`.slice(0, 30),
          name: 'Main',
          oauth_callback_id: newId('cb_'),
          logo_file_id: null,
          primary_color: null,
          support_email: null,
          privacy_policy_url: null,
          terms_url: null,
          provider_order: [],
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })
        .execute();
      await t.ctx.db
        .insertInto('apps')
        .values({
          id: newId('app_'),
          org_id: org.id,
          brand_id: brandId,
          client_id: newId('client_'),
          client_secret_hash: null,
          name: 'App',
          type: 'spa',
          is_confidential: false,
          redirect_uris: [],
          allowed_grant_types: [],
          allowed_scopes: [],
          enabled: true,
          description: null,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })
        .execute();
      return org;
    }

    it('soft-deletes the org and disables its brands, apps, members and registered resources', async () => {
      const org = await orgWithChildren(owner);
      const admin = await createUser(t);
      await addMember(t, { ...org, roles: await builtInRoles(t, org.id) }, admin, 'admin');
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
      });
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assertError(
        await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth }),
        404,
        'not_found',
      );
      const row = await t.ctx.db
        .selectFrom('orgs')
        .selectAll()
        .where('id', '=', org.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.deleted_at?.toISOString(), t.clock.now().toISOString());
      const brands = await t.ctx.db.selectFrom('brands').selectAll().where('org_id', '=', org.id).execute();
      assert.ok(brands.every((b) => b.deleted_at !== null));
      const apps = await t.ctx.db.selectFrom('apps').selectAll().where('org_id', '=', org.id).execute();
      assert.ok(apps.length === 1 && apps.every((a) => a.enabled === false));
      const members = await t.ctx.db
        .selectFrom('org_members')
        .selectAll()
        .where('org_id', '=', org.id)
        .execute();
      assert.equal(members.length, 2);
      assert.ok(members.every((m) => m.disabled_at !== null));
      assert.ok(disabledByHandler.includes(org.id));
      const list = json(
        await t.app.inject({ url: '/identity/organizations?limit=100', headers: admin.auth }),
      );
      assert.ok(!list.items.some((o: { id: string }) => o.id === org.id));
      const audit = (await auditRows(t, org.id)).find((a) => a.action === 'org.deleted')!;
      assert.equal(audit.resource_id, org.id);
      assert.equal(audit.actor_user_id, owner.id);
    });

    it("turns off the org's apps for the issuer at once and disables its brands' connections", async () => {
      const org = await createOrgViaApi(t, owner);
      const brandSlug = `main-${org.slug}`.slice(0, 30);
      const brandUrl = `/identity/organizations/${org.slug}/brands/${brandSlug}`;
      const post = async (url: string, payload: Record<string, unknown>, method: 'POST' | 'PUT' = 'POST') => {
        const res = await t.app.inject({ method, url, headers: owner.auth, payload });
        assert.equal(res.statusCode, 201, res.body);
        return json(res);
      };
      await post(`/identity/organizations/${org.slug}/brands`, { slug: brandSlug, name: 'Main' });
      const app = await post(`${brandUrl}/apps`, {
        name: 'Worker',
        type: 'm2m',
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: [],
      });
      await post(
        `${brandUrl}/connections`,
        { type: 'google', config: { clientId: 'id', clientSecret: 'secret' } },
        'PUT',
      );
      const token = () =>
        t.app.inject({
          method: 'POST',
          url: '/oauth2/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: app.clientId,
            client_secret: app.clientSecret,
          }).toString(),
        });
      // The issuer now holds the client in its cache.
      assert.equal((await token()).statusCode, 200);
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
      });
      assert.equal(res.statusCode, 204, res.body);
      const after = await token();
      assert.equal(after.statusCode, 401, after.body);
      assert.equal(json(after).error, 'invalid_client');
      const connections = await t.ctx.db
        .selectFrom('connections')
        .select('enabled')
        .where('org_id', '=', org.id)
        .execute();
      assert.deepEqual(connections, [{ enabled: false }]);
    });

    it('is owner only: an Admin gets 403 naming org.delete, an outsider 404', async () => {
      const org = await createOrgViaApi(t, owner);
      const admin = await createUser(t);
      await addMember(t, { ...org, roles: await builtInRoles(t, org.id) }, admin, 'admin');
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}`,
        headers: admin.auth,
      });
      assert.deepEqual(assertError(res, 403, 'forbidden').details.missing, ['org.delete']);
      assertError(
        await t.app.inject({
          method: 'DELETE',
          url: `/identity/organizations/${org.slug}`,
          headers: other.auth,
        }),
        404,
        'not_found',
      );
      assert.equal(
        (await t.app.inject({ url: `/identity/organizations/${org.slug}`, headers: owner.auth })).statusCode,
        200,
      );
    });

    it('reserves the slug for 90 days, then frees it', async (ctx) => {
      const start = t.clock.now();
      // Tokens minted at the start stay valid for the tests that follow.
      ctx.after(() => t.clock.set(start));
      const org = await createOrgViaApi(t, owner);
      await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
      });
      // A fresh token for each call: the clock jumps past the access token lifetime.
      const create = async () =>
        t.app.inject({
          method: 'POST',
          url: '/identity/organizations',
          headers: { authorization: `Bearer ${await consoleToken(t, other.id)}` },
          payload: { name: 'Reclaimer', slug: org.slug },
        });
      assertError(await create(), 409, 'conflict');
      t.clock.advance(defaults.orgSlugReservation - 1);
      assertError(await create(), 409, 'conflict');
      t.clock.advance(1);
      const res = await create();
      assert.equal(res.statusCode, 201, res.body);
      const created = json(res);
      assert.notEqual(created.id, org.id);
      assert.equal(created.createdBy, other.id);
      // The new org is the one the slug resolves to; the deleted one stays deleted.
      const get = json(
        await t.app.inject({
          url: `/identity/organizations/${org.slug}`,
          headers: { authorization: `Bearer ${await consoleToken(t, other.id)}` },
        }),
      );
      assert.equal(get.id, created.id);
    });

    it('rolls the whole deletion back when a registered handler fails', async () => {
      const org = await orgWithChildren(owner);
      failDeletionOf.add(org.id);
      const before = await recordCounts(t, org.id);
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/identity/organizations/${org.slug}`,
        headers: owner.auth,
      });
      assertError(res, 500, 'internal_error');
      failDeletionOf.delete(org.id);
      const row = await t.ctx.db
        .selectFrom('orgs')
        .selectAll()
        .where('id', '=', org.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.deleted_at, null);
      const brands = await t.ctx.db.selectFrom('brands').selectAll().where('org_id', '=', org.id).execute();
      assert.ok(brands.every((b) => b.deleted_at === null));
      const apps = await t.ctx.db.selectFrom('apps').selectAll().where('org_id', '=', org.id).execute();
      assert.ok(apps.every((a) => a.enabled));
      assert.deepEqual(await recordCounts(t, org.id), before);
    });

    it('refuses to delete the system org (422)', async () => {
      const sysOwner = await createUser(t);
      await addMember(
        t,
        { id: 'org_system', slug: 'system', roles: await builtInRoles(t, 'org_system') },
        sysOwner,
        'owner',
      );
      const res = await t.app.inject({
        method: 'DELETE',
        url: '/identity/organizations/system',
        headers: sysOwner.auth,
      });
      assertError(res, 422, 'unprocessable_entity');
      assert.equal(
        (await t.app.inject({ url: '/identity/organizations/system', headers: sysOwner.auth })).statusCode,
        200,
      );
    });
  });
});
