import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { TestApp } from '../helpers/app.js';
import { authorizeQuery, cookieHeader, pkce, type SeededClient, walletSignIn } from '../helpers/signin.js';
import type { TestWallet } from '../helpers/wallet.js';

export interface SignedIn {
  userId: string;
  accessToken: string;
  refreshToken: string;
  idToken: string;
  jar: Record<string, string>;
}

/**
 * Signs `wallet` in to `client` through the public flow (authorize, hosted wallet sign-in, consent,
 * code exchange) and returns the tokens, as an app would hold them.
 */
export async function signInToApp(
  t: TestApp,
  client: SeededClient,
  wallet: TestWallet,
  browser: Record<string, string> = {},
  params: Record<string, string> = {},
): Promise<SignedIn> {
  const { verifier, challenge } = pkce();
  const start = await t.app.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(client, { scope: 'openid profile offline_access', ...params }, challenge)}`,
    headers: { cookie: cookieHeader(browser) },
  });
  const id = /\/signin\/([A-Za-z0-9]+)$/.exec(String(start.headers.location))?.[1];
  assert.ok(id, `authorize: ${start.statusCode} ${start.headers.location ?? start.body}`);
  const { res, jar } = await walletSignIn(t, id, wallet, browser);
  assert.equal(res.statusCode, 200, res.body);
  let redirectTo: string | undefined = res.json().redirectTo;
  if (res.json().step === 'consent') {
    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(jar) },
    });
    assert.equal(consent.statusCode, 200, consent.body);
    redirectTo = consent.json().redirectTo;
  }
  const code = new URL(String(redirectTo)).searchParams.get('code');
  assert.ok(code, `no code in ${redirectTo}`);
  const token = await redeemCode(t, client, code, verifier);
  assert.equal(token.statusCode, 200, token.body);
  const body = token.json();
  assert.ok(body.refresh_token, 'expected a refresh token (offline_access)');
  return {
    userId: String(decodeJwt(body.access_token).sub),
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    idToken: body.id_token,
    jar,
  };
}

/** The token request that redeems `code` (with its PKCE verifier) for `client`. */
export function redeemCode(t: TestApp, client: SeededClient, code: string, verifier: string) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      code_verifier: verifier,
      ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
    }).toString(),
  });
}

export function refresh(t: TestApp, client: SeededClient, refreshToken: string) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.clientId,
      ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
    }).toString(),
  });
}

/** A client-credentials access token of a confidential `client`. */
export async function clientCredentialsToken(t: TestApp, client: SeededClient): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: String(client.clientSecret),
    }).toString(),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().access_token;
}
