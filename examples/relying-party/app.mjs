// A server-side web app that signs its users in with Gatehouse through openid-client:
// authorization code + PKCE, state and nonce, the ID token checked, userinfo, refresh and
// sign-out (revoking the refresh token). Sessions are in memory: use your own store in production.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import * as client from 'openid-client';

/**
 * @param {object} opts
 * @param {string} opts.issuer       Gatehouse's BASE_URL
 * @param {string} opts.clientId
 * @param {string} [opts.clientSecret] for a confidential (web) app; none for a public one (PKCE only)
 * @param {string} opts.redirectUri  registered on the app, exactly
 * @param {string} [opts.scope]
 */
export async function createRelyingParty({ issuer, clientId, clientSecret, redirectUri, scope }) {
  const config = await client.discovery(
    new URL(issuer),
    clientId,
    undefined,
    clientSecret ? client.ClientSecretBasic(clientSecret) : client.None(),
    // Local development over http; a deployed issuer is https and needs no option.
    new URL(issuer).protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
  );
  scope ??= 'openid profile offline_access';
  /** session id → { pending?: { verifier, state, nonce }, tokens?, claims? } */
  const sessions = new Map();

  function session(req, res) {
    const id = /(?:^|;\s*)rp_session=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (id && sessions.has(id)) return sessions.get(id);
    const fresh = randomBytes(32).toString('base64url');
    sessions.set(fresh, {});
    res.setHeader('set-cookie', `rp_session=${fresh}; HttpOnly; SameSite=Lax; Path=/`);
    return sessions.get(fresh);
  }

  const send = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const routes = {
    // Start a sign-in: PKCE verifier, state and nonce stay in this browser's session.
    'GET /login': async (_req, res, s) => {
      const verifier = client.randomPKCECodeVerifier();
      s.pending = { verifier, state: client.randomState(), nonce: client.randomNonce() };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: s.pending.state,
        nonce: s.pending.nonce,
      });
      res.writeHead(302, { location: url.href }).end();
    },
    // The issuer's redirect: openid-client checks state, iss, the code exchange and the ID token.
    'GET /callback': async (req, res, s) => {
      const pending = s.pending;
      if (!pending) return send(res, 400, { error: 'no sign-in in progress in this browser' });
      delete s.pending;
      const current = new URL(req.url, redirectUri);
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      s.tokens = tokens;
      s.claims = tokens.claims();
      res.writeHead(302, { location: '/me' }).end();
    },
    'GET /me': async (_req, res, s) => {
      if (!s.tokens) return send(res, 401, { error: 'not signed in' });
      const profile = await client.fetchUserInfo(config, s.tokens.access_token, s.claims.sub);
      send(res, 200, { sub: s.claims.sub, profile, scope: s.tokens.scope, expiresIn: s.tokens.expiresIn() });
    },
    // Refresh tokens are single use: keep the new one.
    'POST /refresh': async (_req, res, s) => {
      if (!s.tokens?.refresh_token) return send(res, 401, { error: 'not signed in' });
      const previous = s.tokens.access_token;
      s.tokens = await client.refreshTokenGrant(config, s.tokens.refresh_token);
      send(res, 200, { refreshed: s.tokens.access_token !== previous, expiresIn: s.tokens.expiresIn() });
    },
    // Sign-out: revoke the refresh token at the issuer and forget the session. (Gatehouse's
    // RP-initiated logout, /oauth2/logout, will end the issuer session too once it exists.)
    'POST /logout': async (_req, res, s) => {
      if (s.tokens?.refresh_token) await client.tokenRevocation(config, s.tokens.refresh_token);
      delete s.tokens;
      delete s.claims;
      send(res, 200, { signedOut: true });
    },
    'GET /': async (_req, res, s) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        s.tokens
          ? `<p>Signed in as ${s.claims.sub}. <a href="/me">Profile</a></p>`
          : '<p><a href="/login">Sign in with Gatehouse</a></p>',
      );
    },
  };

  const server = createServer((req, res) => {
    const route = routes[`${req.method} ${new URL(req.url, 'http://x').pathname}`];
    if (!route) return send(res, 404, { error: 'not found' });
    route(req, res, session(req, res)).catch((err) => {
      send(res, 502, { error: err.code ?? 'error', message: err.message });
    });
  });
  return { server, config };
}
