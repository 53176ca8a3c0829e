import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { createBrand } from '../helpers/oidc.js';

/**
 * Migration 0011 makes brand slugs unique across the service. On a database that already holds a
 * slug in two orgs it must refuse to start, naming the slug, the brands and how to rename them.
 */
describe('migration 0011_brand_slug_global', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** Rewinds the database to before 0011: the per-org constraint back, the migration unrecorded. */
  async function rewind() {
    await sql`alter table brands drop constraint brands_slug_key`.execute(t.ctx.db);
    await sql`alter table brands add constraint brands_org_slug_key unique (org_id, slug)`.execute(t.ctx.db);
    await sql`delete from schema_migrations where version = '0011_brand_slug_global'`.execute(t.ctx.db);
  }

  it('refuses a database with duplicate brand slugs, saying which and how to rename them', async () => {
    await rewind();
    const a = await createBrand(t, { slug: 'shared-slug' });
    const b = await createBrand(t, { slug: 'shared-slug' });
    await assert.rejects(migrate(t.ctx.db), (err: Error) => {
      assert.match(err.message, /brand slugs must be unique across the service/);
      assert.match(err.message, /slug 'shared-slug'/);
      assert.ok(err.message.includes(a.id) && err.message.includes(b.id), err.message);
      assert.match(err.message, /update brands set slug = '<new-slug>' where id = '<brand id>'/);
      return true;
    });
    // Nothing changed: the migration is still pending and both brands are as they were.
    const pending = await sql<{ n: number }>`
      select count(*)::int as n from schema_migrations where version = '0011_brand_slug_global'`.execute(
      t.ctx.db,
    );
    assert.equal(pending.rows[0].n, 0);

    // Renamed as the message says, the migration applies and the slug is now unique service-wide.
    await sql`update brands set slug = 'shared-slug-2' where id = ${b.id}`.execute(t.ctx.db);
    assert.deepEqual(await migrate(t.ctx.db), ['0011_brand_slug_global']);
    await assert.rejects(createBrand(t, { slug: 'shared-slug' }), /brands_slug_key/);
  });
});
