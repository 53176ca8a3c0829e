import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { sha256 } from '../../src/lib/hash.js';
import { invalidateClient, loadClient } from '../../src/oidc/clients.js';
import { endSessions } from '../../src/oidc/signin/logout.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { authorizeQuery, pkce, type SeededClient, seedClient, walletSignIn } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { redeemCode, refresh, signInToApp } from '../users/flow.js';

/**
 * A revocation racing a grant's redemption: no refresh token may outlive a logout, or a reuse
 * detection (a code or refresh token presented twice), that commits between the redemption and the
 * token's write; and logout must not deadlock with a code redeemed at once.
 */
let t: TestApp;
let client: SeededClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  client = await seedClient(t, { confidential: true, firstParty: true });
});
after(() => t.close());

/** A signed-in browser's unredeemed code (offline_access), with its PKCE verifier and session. */
async function unredeemedCode(app: SeededClient = client) {
  const { verifier, challenge } = pkce();
  const start = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(app, { scope: 'openid offline_access' }, challenge)}`,
  });
  const id = /\/signin\/([A-Za-z0-9]+)$/.exec(String(start.headers.location))?.[1];
  assert.ok(id, `authorize: ${start.statusCode} ${start.headers.location ?? start.body}`);
  const { res } = await walletSignIn(t, id, createTestWallet());
  assert.equal(res.statusCode, 200, res.body);
  const code = new URL(String(res.json().redirectTo)).searchParams.get('code');
  assert.ok(code);
  const row = await t.ctx.db
    .selectFrom('authorization_codes')
    .select('session_id')
    .where('code_hash', '=', sha256(code))
    .executeTakeFirstOrThrow();
  assert.ok(row.session_id);
  return { code, verifier, sessionId: row.session_id };
}

/** A browser signed in to `client` with offline_access: its tokens and the session they belong to. */
async function signedInWithSession() {
  const signedIn = await signInToApp(t, client, createTestWallet());
  const { session_id: sessionId } = await t.ctx.db
    .selectFrom('refresh_tokens')
    .select('session_id')
    .where('token_hash', '=', sha256(signedIn.refreshToken))
    .executeTakeFirstOrThrow();
  assert.ok(sessionId);
  return { signedIn, sessionId };
}

/** The session's refresh tokens and access-token records that are still live. */
async function liveTokensOf(sessionId: string) {
  const refreshTokens = await t.ctx.db
    .selectFrom('refresh_tokens')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .where('consumed_at', 'is', null)
    .execute();
  const accessTokens = await t.ctx.db
    .selectFrom('access_tokens')
    .select('jti')
    .where('session_id', '=', sessionId)
    .where('jti', 'not in', (eb) => eb.selectFrom('revoked_tokens').select('jti'))
    .execute();
  return { refresh: refreshTokens.length, access: accessTokens.length };
}

/** Runs `during` once, right after the first call of `store[method]` has returned. */
function after1<S extends object, K extends keyof S>(
  store: S,
  method: K,
  during: (result: unknown) => Promise<void>,
) {
  const original = store[method] as (...args: unknown[]) => Promise<unknown>;
  (store as Record<K, unknown>)[method] = async (...args: unknown[]) => {
    (store as Record<K, unknown>)[method] = original;
    const result = await original.apply(store, args);
    await during(result);
    return result;
  };
}

describe('revocations racing a redemption', () => {
  test('a logout between the code redemption and the refresh token: invalid_grant, no token outlives it', async () => {
    const { code, verifier, sessionId } = await unredeemedCode();
    after1(t.ctx.stores.codes, 'consumeMatching', () => endSessions(t.ctx, [sessionId]).then(() => {}));
    const res = await redeemCode(t, client, code, verifier);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error, 'invalid_grant');
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
  });

  test('a logout between a refresh token redemption and its successor: invalid_grant, nothing live', async () => {
    const { signedIn, sessionId } = await signedInWithSession();
    after1(t.ctx.stores.tokens, 'consumeRefresh', () => endSessions(t.ctx, [sessionId]).then(() => {}));
    const res = await refresh(t, client, signedIn.refreshToken);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error, 'invalid_grant');
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
  });

  test('a refresh token presented again while its successor is made: the family is revoked, the successor never works', async () => {
    const { signedIn, sessionId } = await signedInWithSession();
    // The first request has consumed the token and is making its successor when a copy of the old
    // token arrives (a thief, or the client's retry): reuse detected, the family revoked.
    let replay: Awaited<ReturnType<typeof refresh>> | undefined;
    after1(t.ctx.stores.tokens, 'consumeRefresh', async () => {
      replay = await refresh(t, client, signedIn.refreshToken);
    });
    const winner = await refresh(t, client, signedIn.refreshToken);
    assert.equal(replay?.json().error, 'invalid_grant');
    assert.equal(winner.statusCode, 400, winner.body);
    assert.equal(winner.json().error, 'invalid_grant');
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
  });

  test('a code redeemed twice at once: the second revokes the family, the first answers nothing that lives', async () => {
    const { code, verifier, sessionId } = await unredeemedCode();
    let second: Awaited<ReturnType<typeof redeemCode>> | undefined;
    after1(t.ctx.stores.codes, 'consumeMatching', async () => {
      second = await redeemCode(t, client, code, verifier);
    });
    const first = await redeemCode(t, client, code, verifier);
    assert.equal(second?.json().error, 'invalid_grant');
    assert.equal(first.statusCode, 400, first.body);
    assert.equal(first.json().error, 'invalid_grant');
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
  });

  test('the same, for an app whose brand gates a scope (the code checked step by step before its consumption)', async () => {
    const gatedBrand = await seedClient(t, { confidential: true, firstParty: true });
    const now = t.clock.now();
    await t.ctx.db
      .insertInto('gate_policies')
      .values({
        id: `gpol_${gatedBrand.brandId}`,
        org_id: gatedBrand.orgId,
        name: 'Holders',
        description: null,
        rule: JSON.stringify({ gate: 'gate_unused' }) as never,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await t.ctx.db
      .insertInto('brand_scopes')
      .values({
        id: `scope_${gatedBrand.brandId}`,
        org_id: gatedBrand.orgId,
        brand_id: gatedBrand.brandId,
        name: 'vault:read',
        description: 'Read the vault',
        gate_policy_id: `gpol_${gatedBrand.brandId}`,
        created_at: now,
        updated_at: now,
      })
      .execute();
    invalidateClient(t.ctx, gatedBrand.clientId);
    assert.ok((await loadClient(t.ctx, gatedBrand.clientId))?.gatedScopes?.length, 'the slow path');
    const { code, verifier, sessionId } = await unredeemedCode(gatedBrand);
    // The second redemption arrives when the first has consumed the code and is about to write its
    // tokens (the issuing transaction).
    let second: Awaited<ReturnType<typeof redeemCode>> | undefined;
    const stores = t.ctx.stores;
    const transaction = stores.transaction;
    stores.transaction = async (fn) => {
      stores.transaction = transaction;
      second = await redeemCode(t, gatedBrand, code, verifier);
      return transaction(fn);
    };
    const first = await redeemCode(t, gatedBrand, code, verifier);
    stores.transaction = transaction;
    assert.equal(second?.json().error, 'invalid_grant');
    assert.equal(first.json().error, 'invalid_grant', first.body);
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
  });

  test('a code redeemed while its session is logged out: no deadlock; the tokens answered are revoked', {
    skip: process.env.DATABASE_URL ? false : 'needs PostgreSQL: PGlite has one connection',
  }, async () => {
    const { code, verifier, sessionId } = await unredeemedCode();
    // Another transaction holds the code's row, so the redemption and then the logout queue on it
    // in that order: the redemption will hold the code when the logout wants it.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holderPid = 0;
    const holding = new Promise<void>((ready) => {
      void t.ctx.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        holderPid = rows[0].pid;
        await sql`select 1 from authorization_codes where code_hash = ${sha256(code)} for update`.execute(
          trx,
        );
        ready();
        await held;
      });
    });
    await holding;
    const waiting = async (n: number) => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await sql<{ n: number }>`
            with recursive w(pid) as (
              select pid from pg_stat_activity where ${holderPid}::int = any(pg_blocking_pids(pid))
              union select a.pid from pg_stat_activity a, w where w.pid = any(pg_blocking_pids(a.pid)))
            select count(*)::int as n from w`.execute(t.ctx.db);
        if (rows[0].n >= n) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`fewer than ${n} statements waiting on the code`);
    };
    const redemption = redeemCode(t, client, code, verifier);
    await waiting(1);
    const logout = endSessions(t.ctx, [sessionId]);
    await waiting(2);
    release();
    const [res] = await Promise.all([redemption, logout]);
    // First in the queue, the redemption consumes the code. The logout then either revokes what it
    // answered, or ends the session before its refresh token is written (invalid_grant). Never a
    // deadlock (PostgreSQL would abort one side after deadlock_timeout: a 500, or a failed logout).
    assert.ok(res.statusCode === 200 || res.json().error === 'invalid_grant', res.body);
    assert.deepEqual(await liveTokensOf(sessionId), { refresh: 0, access: 0 });
    if (res.statusCode === 200) {
      const introspected = await t.app.inject({
        method: 'POST',
        url: '/oauth2/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          token: res.json().access_token,
          client_id: client.clientId,
          client_secret: String(client.clientSecret),
        }).toString(),
      });
      assert.equal(introspected.json().active, false);
    }
  });
});
