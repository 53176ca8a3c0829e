import * as oauth from 'oauth4webapi';
import { safeReturnTo } from './lib/returnto.js';

/**
 * Sign-in for the console (DESIGN.md §3): the first-party `console` app, authorization code + PKCE
 * through the hosted sign-in page. Tokens live in this module's memory only; sessionStorage keeps just
 * the pending request (state, PKCE verifier, where to return), which is useless without the code.
 * A reload signs in again with `prompt=none` against the hosted session, which is same-origin.
 */

const CLIENT: oauth.Client = { client_id: 'console' };
const PENDING = 'gatehouse.console.pending';
const SIGNED_OUT = 'gatehouse.console.signed-out';
/** Refresh this long before the access token expires, so a request never races the expiry. */
const EARLY_REFRESH_MS = 60_000;

interface Tokens {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  expiresAt: number;
}

interface Pending {
  state: string;
  verifier: string;
  returnTo: string;
  silent: boolean;
}

let server: oauth.AuthorizationServer | undefined;
let tokens: Tokens | null = null;
let refreshing: Promise<boolean> | null = null;

const issuer = () => new URL(window.location.origin);
const insecure = () => ({ [oauth.allowInsecureRequests]: window.location.protocol === 'http:' });
export const redirectUri = () => `${window.location.origin}/console/callback`;

async function authorizationServer(): Promise<oauth.AuthorizationServer> {
  if (!server) {
    const res = await oauth.discoveryRequest(issuer(), { algorithm: 'oidc', ...insecure() });
    server = await oauth.processDiscoveryResponse(issuer(), res);
  }
  return server;
}

function keep(res: oauth.TokenEndpointResponse): void {
  tokens = {
    accessToken: res.access_token,
    refreshToken: res.refresh_token ?? tokens?.refreshToken,
    idToken: res.id_token ?? tokens?.idToken,
    expiresAt: Date.now() + (res.expires_in ?? 300) * 1000,
  };
}

export function isSignedIn(): boolean {
  return tokens !== null;
}

/** True after an explicit sign-out in this tab: no silent sign-in until the user asks. */
export function signedOutByUser(): boolean {
  return sessionStorage.getItem(SIGNED_OUT) === '1';
}

/**
 * Sends the browser to the hosted sign-in. `silent` asks with `prompt=none` (a reload); `fresh`
 * forces the sign-in page even when a hosted session exists (after a sign-out).
 */
export async function beginSignIn(opts: { returnTo?: string; silent?: boolean; fresh?: boolean } = {}) {
  const as = await authorizationServer();
  const verifier = oauth.generateRandomCodeVerifier();
  const pending: Pending = {
    state: oauth.generateRandomState(),
    verifier,
    returnTo: safeReturnTo(opts.returnTo ?? currentPath()),
    silent: opts.silent === true,
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', CLIENT.client_id);
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'openid profile offline_access');
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (opts.silent) url.searchParams.set('prompt', 'none');
  else if (opts.fresh) url.searchParams.set('prompt', 'login');
  window.location.assign(url.href);
}

export function currentPath(): string {
  return window.location.pathname + window.location.search + window.location.hash;
}

export type CallbackResult =
  | { signedIn: true; returnTo: string }
  | { signedIn: false; returnTo: string; reason: 'login_required' | 'error'; message?: string };

/** Handles `/console/callback`: checks the state, redeems the code with the PKCE verifier. */
export async function completeSignIn(callbackUrl: URL): Promise<CallbackResult> {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!raw)
    return {
      signedIn: false,
      returnTo: '/console/',
      reason: 'error',
      message: 'No sign-in was started in this tab.',
    };
  const pending = JSON.parse(raw) as Pending;
  const as = await authorizationServer();
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, CLIENT, callbackUrl, pending.state);
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError) {
      const code = e.error;
      if (
        pending.silent &&
        (code === 'login_required' || code === 'consent_required' || code === 'interaction_required')
      )
        return { signedIn: false, returnTo: pending.returnTo, reason: 'login_required' };
      return {
        signedIn: false,
        returnTo: pending.returnTo,
        reason: 'error',
        message: e.error_description ?? code,
      };
    }
    return { signedIn: false, returnTo: pending.returnTo, reason: 'error', message: (e as Error).message };
  }
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    CLIENT,
    oauth.None(),
    params,
    redirectUri(),
    pending.verifier,
    insecure(),
  );
  keep(await oauth.processAuthorizationCodeResponse(as, CLIENT, res));
  sessionStorage.removeItem(SIGNED_OUT);
  return { signedIn: true, returnTo: pending.returnTo };
}

async function refresh(): Promise<boolean> {
  const refreshToken = tokens?.refreshToken;
  if (!refreshToken) return false;
  try {
    const as = await authorizationServer();
    const res = await oauth.refreshTokenGrantRequest(as, CLIENT, oauth.None(), refreshToken, insecure());
    keep(await oauth.processRefreshTokenResponse(as, CLIENT, res));
    return true;
  } catch {
    tokens = null;
    return false;
  }
}

/** A live access token, refreshed when close to expiry; null when the session is gone. */
export async function accessToken(force = false): Promise<string | null> {
  if (!tokens) return null;
  if (force || tokens.expiresAt - Date.now() < EARLY_REFRESH_MS) {
    refreshing ??= refresh().finally(() => {
      refreshing = null;
    });
    if (!(await refreshing)) return null;
  }
  return tokens?.accessToken ?? null;
}

/** The session is over (refresh refused): back through the sign-in, returning here. */
export function sessionExpired(): void {
  tokens = null;
  void beginSignIn({ returnTo: currentPath() });
}

/**
 * Signs out: revokes the refresh token, forgets the tokens, and ends the hosted session through the
 * issuer's `end_session_endpoint` when it has one. The tab remembers the sign-out so a reload does
 * not sign in silently again; the next sign-in asks for the wallet (`prompt=login`).
 */
export async function signOut(): Promise<void> {
  const as = await authorizationServer();
  const current = tokens;
  tokens = null;
  sessionStorage.setItem(SIGNED_OUT, '1');
  if (current?.refreshToken) {
    await oauth
      .revocationRequest(as, CLIENT, oauth.None(), current.refreshToken, insecure())
      .catch(() => undefined);
  }
  if (as.end_session_endpoint) {
    const url = new URL(as.end_session_endpoint);
    url.searchParams.set('client_id', CLIENT.client_id);
    if (current?.idToken) url.searchParams.set('id_token_hint', current.idToken);
    // Registered on the console app at start-up: the issuer ends the session and sends us back.
    url.searchParams.set('post_logout_redirect_uri', `${window.location.origin}/console/`);
    window.location.assign(url.href);
    return;
  }
  window.location.assign('/console/');
}

/**
 * Forgets the tokens without a round trip (the account was just deleted: the issuer already ended the
 * session and revoked them). The tab remembers it, so a reload does not try a silent sign-in.
 */
export function forgetSession(): void {
  tokens = null;
  sessionStorage.setItem(SIGNED_OUT, '1');
}
