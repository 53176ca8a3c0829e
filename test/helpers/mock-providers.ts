import { createHash, createHmac, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, jwtVerify, SignJWT } from 'jose';
import type { TestApp } from './app.js';

/**
 * A stand-in for the upstream providers on 127.0.0.1: per realm (one per provider under test) an
 * authorize endpoint that redirects back with a code (or posts it, for form_post), a token endpoint
 * that checks the client's credentials (secret, HTTP Basic, or Apple's ES256 client-secret JWT), the
 * code and the PKCE verifier and answers with tokens and an ID token signed with a key made here,
 * a user-info endpoint, a JWKS and a revocation endpoint that records what it was sent.
 */
export interface RealmOptions {
  /** client id → secret the token endpoint accepts (Apple: ignored, the JWT is checked). */
  clients: Record<string, string>;
  clientAuth: 'post' | 'basic' | 'apple-jwt';
  apple?: { teamId: string; keyId: string; publicKey: KeyObject };
  oidc?: boolean;
  /** Refuses an authorization request without an S256 code challenge. */
  requirePkce?: boolean;
  /** ID token claims (sub, email, …). */
  claims?: Record<string, unknown>;
  /** What the user-info endpoint answers. */
  profile?: unknown;
  /** What `…/wallets` answers (Matrica). */
  wallets?: unknown;
  /** Apple posts this as `user` on a form_post return. */
  appleUser?: unknown;
}

export interface Realm extends RealmOptions {
  name: string;
  issuer: string;
  /** Claims merged into the next ID token only (wrong audience, wrong nonce …). */
  nextIdToken?: Record<string, unknown>;
  /** The next ID token is signed with a key the JWKS does not hold. */
  nextSignedByStranger?: boolean;
  /** The next token request fails with this OAuth error. */
  nextTokenError?: string;
  /** The next authorization request is answered with this error. */
  nextAuthorizeError?: string;
}

interface IssuedCode {
  realm: string;
  clientId: string;
  redirectUri: string;
  codeChallenge?: string;
  nonce?: string;
  used: boolean;
}

export class MockProviders {
  readonly realms = new Map<string, Realm>();
  readonly codes = new Map<string, IssuedCode>();
  readonly accessTokens = new Map<string, string>();
  /** Every authorization request's query, per realm. */
  readonly authorizeRequests: Array<{ realm: string; query: URLSearchParams }> = [];
  /** Every token request's body, per realm. */
  readonly tokenRequests: Array<{ realm: string; body: URLSearchParams }> = [];
  readonly revocations: Array<{ realm: string; token: string; hint?: string; clientId: string }> = [];
  /** Every token, secret and ID token this mock issued or was given, for leak scans. */
  readonly issued: string[] = [];
  private readonly key = generateKeyPairSync('rsa', { modulusLength: 2048 });
  private readonly stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  private readonly kid = `kid-${randomBytes(4).toString('hex')}`;
  url = '';

  private constructor(
    private readonly server: Server,
    /** Unix seconds: the test's clock, so ID tokens and client-secret JWTs line up with it. */
    private readonly now: () => number,
  ) {}

  static async start(now: () => number): Promise<MockProviders> {
    let self: MockProviders | undefined;
    const server = createServer((req, res) => {
      self!.handle(req, res).catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
    self = new MockProviders(server, now);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return self;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  realm(name: string, opts: RealmOptions): Realm {
    const realm: Realm = { ...opts, name, issuer: `${this.url}/${name}` };
    this.realms.set(name, realm);
    for (const secret of Object.values(opts.clients)) this.issued.push(secret);
    return realm;
  }

  /**
   * PROVIDER_<TYPE>_* for `type` pointing at `realm`, with the realm's first client as the operator's
   * default credentials (unless `credentials` is false).
   */
  env(
    type: string,
    realmName: string,
    extra: Record<string, string> = {},
    credentials = true,
  ): Record<string, string> {
    const realm = this.realms.get(realmName)!;
    const p = `PROVIDER_${type.toUpperCase()}_`;
    const base = `${this.url}/${realmName}`;
    const [clientId, secret] = Object.entries(realm.clients)[0];
    const env: Record<string, string> = {
      [`${p}AUTHORIZATION_URL`]: `${base}/authorize`,
      [`${p}TOKEN_URL`]: `${base}/token`,
      [`${p}USERINFO_URL`]: `${base}/userinfo`,
      [`${p}REVOCATION_URL`]: `${base}/revoke`,
      ...(realm.oidc ? { [`${p}ISSUER`]: realm.issuer, [`${p}JWKS_URL`]: `${base}/jwks` } : {}),
      ...extra,
    };
    if (credentials && realm.clientAuth !== 'apple-jwt') {
      env[`${p}CLIENT_ID`] = clientId;
      env[`${p}CLIENT_SECRET`] = secret;
    }
    return env;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const [, realmName, ...rest] = url.pathname.split('/');
    const action = rest.join('/');
    if (realmName === 'app' && action === 'callback')
      return send(res, 200, 'text/plain', 'app callback reached');
    const realm = this.realms.get(realmName);
    if (!realm) return send(res, 404, 'text/plain', 'no such realm');
    if (req.method === 'GET' && action === 'authorize') return this.authorize(realm, url.searchParams, res);
    if (req.method === 'GET' && action === 'jwks') {
      const jwk = await exportJWK(this.key.publicKey);
      return json(res, 200, { keys: [{ ...jwk, kid: this.kid, alg: 'RS256', use: 'sig' }] });
    }
    const body = req.method === 'POST' ? new URLSearchParams(await readBody(req)) : new URLSearchParams();
    if (req.method === 'POST' && action === 'token') return this.token(realm, req, body, res);
    if (req.method === 'POST' && action === 'revoke') {
      const clientId = await this.clientOf(realm, req, body);
      if (!clientId) return json(res, 401, { error: 'invalid_client' });
      this.revocations.push({
        realm: realm.name,
        token: body.get('token') ?? '',
        hint: body.get('token_type_hint') ?? undefined,
        clientId,
      });
      return send(res, 200, 'text/plain', '');
    }
    if (req.method === 'GET') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || this.accessTokens.get(token) !== realm.name)
        return json(res, 401, { error: 'invalid_token' });
      if (action.endsWith('wallets')) return json(res, 200, realm.wallets ?? []);
      return json(res, 200, realm.profile ?? {});
    }
    return send(res, 404, 'text/plain', 'not found');
  }

  private authorize(realm: Realm, q: URLSearchParams, res: ServerResponse): void {
    this.authorizeRequests.push({ realm: realm.name, query: q });
    const clientId = q.get('client_id') ?? '';
    const redirectUri = q.get('redirect_uri');
    if (!(clientId in realm.clients) || !redirectUri || q.get('response_type') !== 'code') {
      send(res, 400, 'text/plain', 'bad authorization request');
      return;
    }
    if (realm.requirePkce && (!q.get('code_challenge') || q.get('code_challenge_method') !== 'S256')) {
      send(res, 400, 'text/plain', 'PKCE required');
      return;
    }
    const back: Record<string, string> = {};
    if (realm.nextAuthorizeError) {
      back.error = realm.nextAuthorizeError;
      realm.nextAuthorizeError = undefined;
    } else {
      const code = `code-${randomBytes(16).toString('hex')}`;
      this.codes.set(code, {
        realm: realm.name,
        clientId,
        redirectUri,
        codeChallenge: q.get('code_challenge') ?? undefined,
        nonce: q.get('nonce') ?? undefined,
        used: false,
      });
      back.code = code;
      if (realm.appleUser !== undefined) back.user = JSON.stringify(realm.appleUser);
    }
    if (q.get('state')) back.state = q.get('state')!;
    if (q.get('response_mode') === 'form_post') {
      const inputs = Object.entries(back)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${escAttr(v)}">`)
        .join('');
      send(
        res,
        200,
        'text/html',
        `<!doctype html><html><body><form id="f" method="post" action="${escAttr(redirectUri)}">${inputs}</form><script>document.getElementById('f').submit()</script></body></html>`,
      );
      return;
    }
    const to = new URL(redirectUri);
    for (const [k, v] of Object.entries(back)) to.searchParams.set(k, v);
    res.writeHead(302, { location: to.toString() });
    res.end();
  }

  /** The authenticated client id, or null. */
  private async clientOf(realm: Realm, req: IncomingMessage, body: URLSearchParams): Promise<string | null> {
    if (realm.clientAuth === 'basic') {
      const m = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      if (!m) return null;
      const [id, secret] = Buffer.from(m[1], 'base64').toString().split(':').map(decodeURIComponent);
      return realm.clients[id] !== undefined && realm.clients[id] === secret ? id : null;
    }
    const id = body.get('client_id') ?? '';
    const secret = body.get('client_secret') ?? '';
    if (realm.clients[id] === undefined) return null;
    if (realm.clientAuth === 'post') return realm.clients[id] === secret ? id : null;
    // Apple: the secret is an ES256 JWT from the team's key.
    try {
      const { payload, protectedHeader } = await jwtVerify(secret, realm.apple!.publicKey, {
        algorithms: ['ES256'],
        issuer: realm.apple!.teamId,
        subject: id,
        audience: 'https://appleid.apple.com',
        currentDate: new Date(this.now() * 1000),
      });
      if (protectedHeader.kid !== realm.apple!.keyId || typeof payload.exp !== 'number') return null;
      this.issued.push(secret);
      return id;
    } catch {
      return null;
    }
  }

  private async token(
    realm: Realm,
    req: IncomingMessage,
    body: URLSearchParams,
    res: ServerResponse,
  ): Promise<void> {
    this.tokenRequests.push({ realm: realm.name, body });
    const clientId = await this.clientOf(realm, req, body);
    if (!clientId) return json(res, 401, { error: 'invalid_client' });
    if (realm.nextTokenError) {
      const error = realm.nextTokenError;
      realm.nextTokenError = undefined;
      return json(res, 400, { error });
    }
    const issued = this.codes.get(body.get('code') ?? '');
    if (
      body.get('grant_type') !== 'authorization_code' ||
      !issued ||
      issued.used ||
      issued.realm !== realm.name ||
      issued.clientId !== clientId ||
      issued.redirectUri !== body.get('redirect_uri')
    ) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    issued.used = true;
    if (issued.codeChallenge) {
      const verifier = body.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== issued.codeChallenge) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      }
    }
    const accessToken = `at-${realm.name}-${randomBytes(16).toString('hex')}`;
    const refreshToken = `rt-${realm.name}-${randomBytes(16).toString('hex')}`;
    this.accessTokens.set(accessToken, realm.name);
    this.issued.push(accessToken, refreshToken);
    const out: Record<string, unknown> = {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: 3600,
    };
    if (realm.oidc) {
      const now = this.now();
      const claims = {
        iss: realm.issuer,
        aud: clientId,
        iat: now,
        exp: now + 600,
        ...(issued.nonce ? { nonce: issued.nonce } : {}),
        ...realm.claims,
        ...realm.nextIdToken,
      };
      const key = realm.nextSignedByStranger ? this.stranger.privateKey : this.key.privateKey;
      realm.nextIdToken = undefined;
      realm.nextSignedByStranger = false;
      out.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.kid }).sign(key);
      this.issued.push(out.id_token as string);
    }
    return json(res, 200, out);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json', JSON.stringify(body));
}

function escAttr(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** Follows the provider's authorization step: the callback URL (GET) or the form it posts. */
export async function followAuthorize(
  authorizationUrl: string,
): Promise<{ method: 'GET'; url: string } | { method: 'POST'; url: string; form: Record<string, string> }> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  if (res.status === 302) return { method: 'GET', url: res.headers.get('location')! };
  const html = await res.text();
  if (res.status !== 200) throw new Error(`mock authorize answered ${res.status}: ${html}`);
  const action = /action="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&');
  const form: Record<string, string> = {};
  for (const m of html.matchAll(/name="([^"]+)" value="([^"]*)"/g)) {
    form[m[1]] = m[2]
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&amp;/g, '&');
  }
  return { method: 'POST', url: action, form };
}

/** A brand's own connection, sealed as the connections service seals it. */
export async function seedConnection(
  t: TestApp,
  input: { orgId: string; brandId: string; type: string; config: Record<string, unknown>; enabled?: boolean },
): Promise<void> {
  const now = t.clock.now();
  await t.ctx.db
    .insertInto('connections')
    .values({
      id: `conn_${randomBytes(8).toString('hex')}`,
      org_id: input.orgId,
      brand_id: input.brandId,
      type: input.type,
      enabled: input.enabled ?? true,
      config_enc: t.ctx.encryptor.encrypt(
        JSON.stringify(input.config),
        `connection:${input.brandId}:${input.type}`,
      ),
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** An EC P-256 key pair as Apple issues it (the .p8 PEM) for client-secret JWTs. */
export function appleKey(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

/** Telegram's widget hash over `fields` with `botToken` (the documented algorithm). */
export function telegramHash(fields: Record<string, string>, botToken: string): string {
  const check = Object.keys(fields)
    .filter((k) => k !== 'hash')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  return createHmac('sha256', createHash('sha256').update(botToken).digest()).update(check).digest('hex');
}
