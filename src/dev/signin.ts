import * as oauth from 'oauth4webapi';
import { CONSOLE_CLIENT_ID } from '../config/system.js';
import { DevError, type DevWallet } from './wallet.js';

/**
 * `gatehouse dev`: a client of a running Gatehouse that signs a local wallet in the way a browser
 * and an app would (authorize with PKCE, the headless interaction API, the code, the token
 * endpoint). It never touches the database or the signing keys.
 */

/** A tiny cookie jar: the interaction and session cookies the issuer sets on the way. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
}

async function failure(res: Response, what: string): Promise<DevError> {
  const text = await res.text();
  let detail = text.slice(0, 300);
  try {
    const body = JSON.parse(text);
    detail = body.error?.message ?? body.error_description ?? body.error ?? detail;
  } catch {
    /* not JSON: keep the text */
  }
  return new DevError(`${what} failed: HTTP ${res.status} ${detail}`);
}

export interface HostedSignInOptions {
  wallet: DevWallet;
  /** The answer to a consent step (first-party apps such as the console skip it). */
  consent?: 'allow' | 'deny';
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
}

/**
 * Follows an authorization request through the hosted sign-in as the wallet, and returns the URL the
 * issuer finally sends the browser to: the app's redirect URI with `code` (or `error`), `state` and
 * `iss`. Nothing is followed beyond the issuer.
 */
export async function signInWithWallet(authorizeUrl: URL, opts: HostedSignInOptions): Promise<URL> {
  const log = opts.log ?? (() => {});
  const jar = new CookieJar();
  const start = await fetch(authorizeUrl, { redirect: 'manual', headers: { accept: 'application/json' } });
  jar.take(start);
  const location = start.headers.get('location');
  if (start.status !== 302 || !location) throw await failure(start, 'the authorization request');
  const next = new URL(location, authorizeUrl);
  const match = next.origin === authorizeUrl.origin ? /^\/signin\/([A-Za-z0-9]+)$/.exec(next.pathname) : null;
  // Straight back to the app: an error, or (with a session) a code without sign-in.
  if (!match) return next;

  const base = `${authorizeUrl.origin}/interactions/${match[1]}`;
  const post = async (path: string, body: unknown, what: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...jar.header() },
      body: JSON.stringify(body),
    });
    jar.take(res);
    if (!res.ok) throw await failure(res, what);
    return res.json() as Promise<{ message?: string; step?: string; redirectTo?: string }>;
  };

  const view = await fetch(base, { headers: { accept: 'application/json', ...jar.header() } });
  if (!view.ok) throw await failure(view, 'reading the interaction');
  const interaction = (await view.json()) as { brand: { name: string }; app: { name: string } };
  log(`signing in to ${interaction.app.name} (${interaction.brand.name}) as wallet ${opts.wallet.address}`);

  const challenge = await post('/wallet/challenge', { address: opts.wallet.address }, 'the wallet challenge');
  const message = challenge.message as string;
  const verified = await post(
    '/wallet/verify',
    {
      address: opts.wallet.address,
      signature: opts.wallet.sign(message),
      signedMessage: Buffer.from(message, 'utf8').toString('base64'),
    },
    'the wallet proof',
  );
  let redirectTo = verified.redirectTo;
  if (verified.step === 'consent') {
    const decision = opts.consent ?? 'allow';
    log(`consent: ${decision}`);
    redirectTo = (await post('/consent', { decision }, 'the consent step')).redirectTo;
  }
  if (!redirectTo) throw new DevError('the issuer did not say where to go after sign-in');
  return new URL(redirectTo, authorizeUrl);
}

export interface ConsoleTokenResult {
  tokens: oauth.TokenEndpointResponse;
  /** The user id (`sub`) the wallet signed in as. */
  userId: string;
}

/**
 * A console token for the wallet, exactly as the console app gets one: discovery, authorization
 * code with PKCE (S256), state and nonce, through the hosted sign-in, then the code at the token
 * endpoint, the ID token checked.
 */
export async function consoleToken(
  issuer: string,
  opts: HostedSignInOptions & { scope?: string },
): Promise<ConsoleTokenResult> {
  const issuerUrl = new URL(issuer);
  const insecure = { [oauth.allowInsecureRequests]: issuerUrl.protocol === 'http:' };
  let as: oauth.AuthorizationServer;
  try {
    as = await oauth.processDiscoveryResponse(
      issuerUrl,
      await oauth.discoveryRequest(issuerUrl, { algorithm: 'oidc', ...insecure }),
    );
  } catch (e) {
    throw new DevError(
      `cannot read ${issuer}/.well-known/openid-configuration (is the server running? ${(e as Error).message})`,
    );
  }
  const client: oauth.Client = { client_id: CONSOLE_CLIENT_ID };
  const redirectUri = `${issuer}/console/callback`;
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: opts.scope ?? 'openid profile',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();

  const back = await signInWithWallet(url, opts);
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, back, state);
  } catch (e) {
    const cause = (e as { cause?: URLSearchParams }).cause;
    const detail =
      cause instanceof URLSearchParams ? (cause.get('error_description') ?? cause.get('error')) : '';
    throw new DevError(`the issuer refused the sign-in: ${detail || (e as Error).message}`);
  }
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    verifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  return { tokens, userId: String(claims?.sub) };
}
