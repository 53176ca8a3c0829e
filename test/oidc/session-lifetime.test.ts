import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaults } from '../../src/config/defaults.js';
import { sha256 } from '../../src/lib/hash.js';
import { sweepExpiredSignin } from '../../src/oidc/signin/sweep.js';
import { type TestApp, buildTestApp, consoleToken } from '../helpers/app.js';
import { authorizeQuery, cookieHeader, type SeededClient, seedClient } from '../helpers/signin.js';
import { createTestWallet } from '../helpers/wallet.js';
import { refresh, signInToApp } from '../users/flow.js';

/**
 * A browser session lives `sessionTtl` (14 days) from its last sign-in; an offline_access grant made
 * in it lives on after it (OIDC Core §11), until the refresh token's own expiry, a revocation, or a
 * logout of that session.
 */
let t: TestApp;
let client: SeededClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  client = await seedClient(t, { confidential: true, firstParty: true });
});
after(() => t.close());

const DAY = 86_400;

async function sessionOf(refreshToken: string): Promise<string> {
  const row = await t.ctx.db
    .selectFrom('refresh_tokens')
    .select('session_id')
    .where('token_hash', '=', sha256(refreshToken))
    .executeTakeFirstOrThrow();
  assert.ok(row.session_id);
  return row.session_id;
}

async function sessionRows(id: string): Promise<number> {
  return (await t.ctx.db.selectFrom('sessions').select('id').where('id', '=', id).execute()).length;
}

/** `prompt=none` from the browser holding `jar`: the code's redirect, or the error it answers. */
async function silentSignIn(jar: Record<string, string>): Promise<string | null> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(client, { prompt: 'none' })}`,
    headers: { cookie: cookieHeader(jar) },
  });
  assert.equal(res.statusCode, 302, res.body);
  const back = new URL(String(res.headers.location));
  return back.searchParams.get('code') ? 'code' : back.searchParams.get('error');
}

describe('session lifetime and offline access', () => {
  test('an offline_access refresh token outlives the browser session, and the sweep', async () => {
    const signedIn = await signInToApp(t, client, createTestWallet());
    const sessionId = await sessionOf(signedIn.refreshToken);
    t.clock.advance(defaults.sessionTtl + DAY);
    await sweepExpiredSignin(t.ctx);
    assert.equal(await silentSignIn(signedIn.jar), 'login_required', 'the browser session is over');
    const res = await refresh(t, client, signedIn.refreshToken);
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json().refresh_token;
    assert.equal(typeof rotated, 'string');
    assert.equal(await sessionOf(rotated), sessionId, 'still the grant of that session');
    assert.equal(await sessionRows(sessionId), 1, 'kept for its live refresh token');

    // Once no live refresh token remains (here: it expired unused), the sweep lets the row go.
    t.clock.advance(defaults.refreshTokenTtl + 1);
    await sweepExpiredSignin(t.ctx);
    assert.equal(await sessionRows(sessionId), 0);
  });

  test('a kept session still ends: by its id, or by a logout naming its sid, and its grant with it', async () => {
    const viaDelete = await signInToApp(t, client, createTestWallet());
    const viaLogout = await signInToApp(t, client, createTestWallet());
    t.clock.advance(defaults.sessionTtl + DAY);
    await sweepExpiredSignin(t.ctx);

    const sessionId = await sessionOf(viaDelete.refreshToken);
    const ended = await t.app.inject({
      method: 'DELETE',
      url: `/users/me/sessions/${sessionId}`,
      headers: { authorization: `Bearer ${await consoleToken(t, viaDelete.userId)}` },
    });
    assert.equal(ended.statusCode, 204, ended.body);
    assert.equal((await refresh(t, client, viaDelete.refreshToken)).statusCode, 400);

    const logout = await t.app.inject({
      method: 'GET',
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: viaLogout.idToken, client_id: client.clientId })}`,
    });
    assert.ok(logout.statusCode < 400, logout.body);
    assert.equal(await sessionRows(await sessionOf(viaLogout.refreshToken)), 0);
    assert.equal((await refresh(t, client, viaLogout.refreshToken)).statusCode, 400);
  });

  test("ending a session after its app left the client cache answers (the embedded database's one connection)", async () => {
    const signedIn = await signInToApp(t, client, createTestWallet());
    const sessionId = await sessionOf(signedIn.refreshToken);
    t.clock.advance(60); // past clientCacheTtlMs: ending the session reads the app again
    const token = await consoleToken(t, signedIn.userId);
    const answer = await Promise.race([
      t.app.inject({
        method: 'DELETE',
        url: `/users/me/sessions/${sessionId}`,
        headers: { authorization: `Bearer ${token}` },
      }),
      new Promise<'frozen'>((resolve) => setTimeout(() => resolve('frozen'), 5000).unref()),
    ]);
    assert.notEqual(answer, 'frozen', 'the read of the app waited on the transaction that waited on it');
    assert.equal((answer as { statusCode: number }).statusCode, 204);
  });

  test('an expired session with no offline grant is swept', async () => {
    const signedIn = await signInToApp(t, client, createTestWallet());
    const sessionId = await sessionOf(signedIn.refreshToken);
    const revoked = await t.app.inject({
      method: 'POST',
      url: '/oauth2/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: signedIn.refreshToken,
        client_id: client.clientId,
        client_secret: client.clientSecret as string,
      }).toString(),
    });
    assert.equal(revoked.statusCode, 200, revoked.body);
    t.clock.advance(defaults.sessionTtl + 1);
    await sweepExpiredSignin(t.ctx);
    assert.equal(await sessionRows(sessionId), 0);
  });

  test('signing in again gives the session a new lifetime, as its cookie has', async () => {
    const wallet = createTestWallet();
    const first = await signInToApp(t, client, wallet);
    const sessionId = await sessionOf(first.refreshToken);
    t.clock.advance(13 * DAY);
    const again = await signInToApp(t, client, wallet, first.jar, { prompt: 'login' });
    assert.equal(await sessionOf(again.refreshToken), sessionId, 'the same session, renewed');
    t.clock.advance(2 * DAY);
    assert.equal(await silentSignIn(again.jar), 'code', 'day 15: 2 days after the last sign-in');
    t.clock.advance(defaults.sessionTtl - 2 * DAY + 1);
    assert.equal(await silentSignIn(again.jar), 'login_required');
  });
});
