import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { revocationStore } from '../../src/stores/revocations.store.js';
import { type TestApp, buildTestApp, createUser } from '../helpers/app.js';

/**
 * A revocation and its announcement to every instance's caches commit together: a revocation whose
 * announcement fails leaves nothing revoked (the caller sees the error and may retry, and the retry
 * announces), never a revoked row that other instances were not told about.
 */
let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

/** The store on a database whose every `pg_notify` fails, as a dropped connection would. */
function storeWithFailingAnnouncements() {
  const failNotify: KyselyPlugin = {
    transformQuery({ node }) {
      if (JSON.stringify(node).includes('pg_notify')) throw new Error('announcement failed');
      return node;
    },
    async transformResult({ result }) {
      return result;
    },
  };
  return revocationStore(t.ctx.db.withPlugin(failNotify));
}

async function isRevoked(jti: string): Promise<boolean> {
  const row = await t.ctx.db
    .selectFrom('revoked_tokens')
    .select('jti')
    .where('jti', '=', jti)
    .executeTakeFirst();
  return row !== undefined;
}

describe('revocations outside a caller transaction', () => {
  test('an access token: revoked and announced together, or neither', async () => {
    const now = t.clock.now();
    const expires = new Date(now.getTime() + 3600_000);
    await assert.rejects(
      storeWithFailingAnnouncements().revokeAccessToken(undefined, 'jti-announce-1', expires, now),
      /announcement failed/,
    );
    assert.equal(await isRevoked('jti-announce-1'), false);
    await t.ctx.stores.revocations.revokeAccessToken(undefined, 'jti-announce-1', expires, now);
    assert.equal(await isRevoked('jti-announce-1'), true);
  });

  test("a family: its tokens' revocation rolls back with a failed announcement", async () => {
    const now = t.clock.now();
    const user = await createUser(t);
    const family = 'fam-announce-1';
    await t.ctx.stores.revocations.recordAccessToken(undefined, {
      jti: 'jti-announce-2',
      familyId: family,
      clientId: 'client-announce',
      userId: user.id,
      expiresAt: new Date(now.getTime() + 3600_000),
    });
    await assert.rejects(
      storeWithFailingAnnouncements().revokeFamilies(undefined, { familyId: family }, now),
      /announcement failed/,
    );
    assert.equal(await isRevoked('jti-announce-2'), false);
    await t.ctx.stores.revocations.revokeFamilies(undefined, { familyId: family }, now);
    assert.equal(await isRevoked('jti-announce-2'), true);
  });
});
