import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { upsertOAuthLink } from '../../src/stores/accounts.store.js';
import { type TestApp, buildTestApp, createUser, json } from '../helpers/app.js';
import { createTestWallet } from '../helpers/wallet.js';

let t: TestApp;

before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

/** Every row of every table of the app's schema, as text. */
async function dumpAllRows(): Promise<string> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.ctx.db);
  assert.ok(tables.rows.length > 10);
  const parts: string[] = [];
  for (const { table_name } of tables.rows) {
    const rows = await sql`select * from ${sql.id(table_name)}`.execute(t.ctx.db);
    parts.push(JSON.stringify(rows.rows, (_k, v) => (v?.type === 'Buffer' ? '' : v)));
  }
  return parts.join('\n');
}

it('no stored row holds a plaintext API key, provider token or wallet challenge nonce', async () => {
  const user = await createUser(t);
  const key = json(
    await t.app.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      headers: user.auth,
      payload: { name: 'k' },
    }),
  ).key;
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/users/me', headers: { authorization: `Bearer ${key}` } }))
      .statusCode,
    200,
  );

  await t.ctx.db.transaction().execute((trx) =>
    upsertOAuthLink(t.ctx, trx, {
      userId: user.id,
      provider: 'google',
      externalUserId: 'g-secret-scan',
      accessToken: 'ya29.provider-access-token-value',
      refreshToken: '1//provider-refresh-token-value',
    }),
  );

  const wallet = createTestWallet();
  const pending = json(
    await t.app.inject({
      method: 'POST',
      url: '/users/me/wallet-challenge',
      headers: user.auth,
      payload: { address: wallet.address },
    }),
  ).message;
  const redeemed = json(
    await t.app.inject({
      method: 'POST',
      url: '/users/me/wallet-challenge',
      headers: user.auth,
      payload: { address: wallet.address },
    }),
  ).message;
  const linked = await t.app.inject({
    method: 'POST',
    url: '/users/me/public-keys',
    headers: user.auth,
    payload: { blockchain: 'solana', ...wallet.prove(redeemed) },
  });
  assert.equal(linked.statusCode, 201);

  const nonceOf = (m: string) => /^Nonce: (\w+)$/m.exec(m)![1];
  const dump = await dumpAllRows();
  // The scan sees the users tables: public values are there.
  assert.ok(dump.includes(wallet.address));
  assert.ok(dump.includes(key.slice(0, 8)), 'the display prefix is stored');
  assert.ok(dump.includes('g-secret-scan'));
  const secrets = {
    apiKey: key,
    apiKeySecretPart: key.slice(8),
    providerAccess: 'ya29.provider-access-token-value',
    providerRefresh: '1//provider-refresh-token-value',
    pendingNonce: nonceOf(pending),
    redeemedNonce: nonceOf(redeemed),
  };
  for (const [name, secret] of Object.entries(secrets))
    assert.ok(!dump.includes(secret), `${name} is stored in clear`);
});
