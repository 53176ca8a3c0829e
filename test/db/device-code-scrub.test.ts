import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.js';
import { sha256 } from '../../src/lib/hash.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { seedClient } from '../helpers/signin.js';

/** Migration 0013 scrubs device user codes that earlier versions left in plaintext in interaction rows. */
describe('migration 0013_device_user_code_hash', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('replaces params.userCode by the hash of the normalised code and drops it from return_to', async () => {
    const client = await seedClient(t, { grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] });
    const now = t.clock.now();
    const id = randomAlphanumeric(32);
    await t.ctx.db
      .insertInto('interactions')
      .values({
        id,
        kind: 'device',
        app_id: client.appId,
        client_id: client.clientId,
        brand_id: client.brandId,
        params: JSON.stringify({ redirectUri: '', scopes: ['openid'], userCode: 'bcdf-ghjk' }) as never,
        return_to: '/device?user_code=bcdf-ghjk',
        user_id: null,
        session_id: null,
        auth_time: null,
        created_at: now,
        expires_at: new Date(now.getTime() + 600_000),
        completed_at: null,
        binding_hash: null,
      })
      .execute();
    await sql`delete from schema_migrations where version = '0013_device_user_code_hash'`.execute(t.ctx.db);
    assert.deepEqual(await migrate(t.ctx.db), ['0013_device_user_code_hash']);
    const row = await t.ctx.db
      .selectFrom('interactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row.params, { redirectUri: '', scopes: ['openid'], userCodeHash: sha256('BCDFGHJK') });
    assert.equal(row.return_to, '/device');
    assert.ok(!/bcdf|BCDF/.test(JSON.stringify(row)));
  });
});
