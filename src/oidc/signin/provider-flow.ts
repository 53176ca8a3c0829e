import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { ProviderNotEnabled } from './errors.js';
import { safeEqual, sha256, sha256b64url } from '../../lib/hash.js';
import { newId, newSecret } from '../../lib/ids.js';
import { callbackUrl, resolveEndpoints } from '../../providers/config.js';
import { PROVIDERS, PROVIDER_LABELS } from '../../providers/index.js';
import type {
  ExternalIdentity,
  OAuthProviderDefinition,
  ProviderEndpoints,
  ProviderTokens,
} from '../../providers/provider.js';
import type { ProviderStateRow } from './stores.js';
import { telegramNamespace, verifyTelegramLogin } from '../../providers/telegram.js';
import type {
  OAuthProviderConfig,
  ProviderConfig,
  ProviderType,
  TelegramProviderConfig,
} from '../../providers/types.js';

/** Why a trip to a provider did not sign anyone in; the sign-in page shows the message. */
export const PROVIDER_ERROR_MESSAGES = {
  cancelled: 'Sign-in was cancelled. Choose a way to continue.',
  provider_error: 'The provider could not sign you in. Try again or choose another way.',
  token_exchange_failed: 'The provider did not confirm the sign-in. Try again or choose another way.',
  invalid_id_token: 'The provider’s answer could not be verified. Try again or choose another way.',
  profile_unavailable: 'Your profile could not be read from the provider. Try again or choose another way.',
  telegram_invalid: 'The Telegram sign-in could not be verified. Try again.',
  telegram_expired: 'The Telegram sign-in is too old. Sign in with Telegram again.',
  not_enabled: 'This sign-in method is not available any more. Choose another way.',
  account_conflict: 'That account is linked to another user.',
  requirement_unavailable: 'The wallet requirements cannot be checked right now. Try again in a moment.',
  unexpected: 'Something went wrong. Try again or choose another way.',
} as const;
export type ProviderFailure = keyof typeof PROVIDER_ERROR_MESSAGES;

/** The sign-in page's message for an `error` code a provider return carried; unknown codes show nothing. */
export function providerErrorMessage(code: string | undefined): string | undefined {
  return code && Object.hasOwn(PROVIDER_ERROR_MESSAGES, code)
    ? PROVIDER_ERROR_MESSAGES[code as ProviderFailure]
    : undefined;
}

/** A failed trip to a provider. `claimedExternalId` is the account it was about, when known. */
export class ProviderFlowError extends Error {
  constructor(
    readonly reason: ProviderFailure,
    message: string = PROVIDER_ERROR_MESSAGES[reason],
    readonly claimedExternalId?: string,
  ) {
    super(message);
  }
}

/** 404 for a provider the brand does not offer (no enabled connection, no operator credentials). */
export function providerNotEnabled(type: ProviderType): ProviderNotEnabled {
  return new ProviderNotEnabled(PROVIDER_LABELS[type]);
}

export interface StartInput {
  type: ProviderType;
  brand: { id: string; oauthCallbackId: string };
  purpose: 'signin' | 'link';
  interactionId?: string;
  userId?: string;
  expiresAt: Date;
  /** The state row's id, when the caller names it (a link's flow cookie is named after it). */
  id?: string;
  /** SHA-256 of the flow-state cookie of the browser that started a link (flow-state.ts). */
  bindingHash?: string;
}

/** The brand's credentials for `type`, or 404 when the brand does not offer it. */
export async function credentialsFor(
  ctx: AppContext,
  brandId: string,
  type: ProviderType,
): Promise<ProviderConfig> {
  const creds = await ctx.stores.signin.connections.credentials(brandId, type);
  if (!creds) throw providerNotEnabled(type);
  return creds.config;
}

const stateAad = (id: string, what: string) => `provider_state:${id}:${what}`;

/**
 * Starts an OAuth trip: stores the state (hashed), the nonce and PKCE verifier (sealed), bound to the
 * interaction or user and the brand, and returns the provider's authorization URL.
 */
export async function startOAuth(ctx: AppContext, input: StartInput): Promise<string> {
  const def = PROVIDERS[input.type];
  if (def.kind !== 'oauth') throw new Error('startOAuth is for OAuth providers');
  const config = (await credentialsFor(ctx, input.brand.id, input.type)) as OAuthProviderConfig;
  const { endpoints } = resolveEndpoints(ctx, input.type, config);
  const id = input.id ?? newId('pst_');
  const state = newSecret();
  const nonce = def.oidc ? newSecret() : undefined;
  const verifier = def.pkce ? oauth.generateRandomCodeVerifier() : undefined;
  await ctx.stores.signin.providerStates.insert({
    id,
    state_hash: sha256(state),
    provider: input.type,
    brand_id: input.brand.id,
    purpose: input.purpose,
    interaction_id: input.interactionId ?? null,
    user_id: input.userId ?? null,
    binding_hash: input.bindingHash ?? null,
    nonce_enc: nonce ? ctx.encryptor.encrypt(nonce, stateAad(id, 'nonce')) : null,
    code_verifier_enc: verifier ? ctx.encryptor.encrypt(verifier, stateAad(id, 'verifier')) : null,
    created_at: ctx.clock.now(),
    expires_at: input.expiresAt,
  });
  const url = new URL(endpoints.authorizationUrl);
  const scopes = config.scopes?.length ? config.scopes : def.defaultScopes;
  url.searchParams.set('client_id', config.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(ctx, input.brand.oauthCallbackId, input.type));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  if (nonce) url.searchParams.set('nonce', nonce);
  if (verifier) {
    url.searchParams.set('code_challenge', sha256b64url(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [k, v] of Object.entries(def.extraAuthParams ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

/**
 * Starts a Telegram trip: the state is a random value the browser carries in a cookie (the widget
 * has no `state`); returns it with what the widget page needs.
 */
export async function startTelegram(
  ctx: AppContext,
  input: StartInput,
): Promise<{ binding: string; botUsername: string; authUrl: string }> {
  const config = (await credentialsFor(ctx, input.brand.id, 'telegram')) as TelegramProviderConfig;
  const binding = newSecret();
  const cap = new Date(ctx.clock.nowMs() + defaults.telegramBindingTtl * 1000);
  await ctx.stores.signin.providerStates.insert({
    id: input.id ?? newId('pst_'),
    state_hash: sha256(binding),
    provider: 'telegram',
    brand_id: input.brand.id,
    purpose: input.purpose,
    interaction_id: input.interactionId ?? null,
    user_id: input.userId ?? null,
    binding_hash: input.bindingHash ?? null,
    nonce_enc: null,
    code_verifier_enc: null,
    created_at: ctx.clock.now(),
    expires_at: input.expiresAt < cap ? input.expiresAt : cap,
  });
  return {
    binding,
    botUsername: config.botUsername,
    authUrl: callbackUrl(ctx, input.brand.oauthCallbackId, 'telegram'),
  };
}

/** Verifies the widget's fields with the brand's bot token (decrypted only here, in memory). */
export async function telegramIdentity(
  ctx: AppContext,
  state: ProviderStateRow,
  fields: Record<string, string | undefined>,
): Promise<ExternalIdentity> {
  const creds = await ctx.stores.signin.connections.credentials(state.brand_id, 'telegram');
  if (!creds) throw new ProviderFlowError('not_enabled');
  const { botToken } = creds.config as TelegramProviderConfig;
  const check = verifyTelegramLogin(
    fields,
    botToken,
    ctx.clock.nowSec(),
    telegramNamespace(creds.source, state.brand_id, botToken),
  );
  if (!check.ok) {
    throw new ProviderFlowError(
      check.reason === 'expired' ? 'telegram_expired' : 'telegram_invalid',
      undefined,
      check.claimedId,
    );
  }
  return check.identity;
}

/** Key sets by URL: jose caches keys and refetches on an unknown `kid`. */
const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function jwksFor(url: string) {
  let set = jwksCache.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { timeoutDuration: defaults.providerRequestTimeoutMs });
    jwksCache.set(url, set);
  }
  return set;
}

const insecure = (url: string) => url.startsWith('http:');

/**
 * Finishes an OAuth trip whose state was redeemed: exchanges the code with the brand's credentials
 * (decrypted only here), verifies the ID token of OIDC providers against the provider's JWKS (iss,
 * aud = client id, exp, nonce) and reads the identity. Every failure is a ProviderFlowError.
 */
export async function oauthIdentity(
  ctx: AppContext,
  state: ProviderStateRow,
  params: URLSearchParams,
  oauthCallbackId: string,
): Promise<{ identity: ExternalIdentity; tokens: ProviderTokens }> {
  const type = state.provider as ProviderType;
  const def = PROVIDERS[type] as OAuthProviderDefinition;
  const error = params.get('error');
  if (error) throw new ProviderFlowError(error === 'access_denied' ? 'cancelled' : 'provider_error');
  const code = params.get('code');
  if (!code) throw new ProviderFlowError('provider_error', 'The provider returned no authorization code.');

  const creds = await ctx.stores.signin.connections.credentials(state.brand_id, type);
  if (!creds) throw new ProviderFlowError('not_enabled');
  const config = creds.config as OAuthProviderConfig;
  const { endpoints, overridden } = resolveEndpoints(ctx, type, config);
  const tokens = await exchangeCode(
    ctx,
    def,
    config,
    endpoints,
    overridden.has('issuer'),
    state,
    code,
    oauthCallbackId,
  );
  try {
    const identity = await def.identity({
      tokens,
      endpoints,
      callback: params,
      fetchJson: (url) => fetchJson(url, tokens.accessToken),
    });
    return { identity, tokens };
  } catch (err) {
    if (err instanceof ProviderFlowError) throw err;
    throw new ProviderFlowError('profile_unavailable', undefined, str(tokens.claims?.sub));
  }
}

async function exchangeCode(
  ctx: AppContext,
  def: OAuthProviderDefinition,
  config: OAuthProviderConfig,
  endpoints: ProviderEndpoints,
  issuerOverridden: boolean,
  state: ProviderStateRow,
  code: string,
  oauthCallbackId: string,
): Promise<ProviderTokens> {
  let as: oauth.AuthorizationServer = {
    issuer: endpoints.issuer ?? new URL(endpoints.tokenUrl).origin,
    authorization_endpoint: endpoints.authorizationUrl,
    token_endpoint: endpoints.tokenUrl,
  };
  // oauth4webapi checks ID token times against its own clock: align it with ctx.clock.
  const client: oauth.Client = {
    client_id: config.clientId,
    [oauth.clockSkew]: ctx.clock.nowSec() - Math.floor(Date.now() / 1000),
  };
  const verifier = state.code_verifier_enc
    ? ctx.encryptor.decrypt(state.code_verifier_enc, stateAad(state.id, 'verifier'))
    : oauth.nopkce;
  const nonce = state.nonce_enc
    ? ctx.encryptor.decrypt(state.nonce_enc, stateAad(state.id, 'nonce'))
    : undefined;

  const grant = { def, config, endpoints, as, client };
  const response = await requestCodeGrant(ctx, grant, { code, verifier, oauthCallbackId });
  if (def.oidc && def.expectedIssuer) {
    // Microsoft names the account's tenant in `iss`: the expected issuer follows the token's `tid`.
    const claims = await idTokenClaimsOf(response);
    as = { ...as, issuer: def.expectedIssuer(endpoints, claims, issuerOverridden) };
  }

  let result: oauth.TokenEndpointResponse;
  try {
    result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      response,
      def.oidc ? { expectedNonce: nonce, requireIdToken: true } : undefined,
    );
  } catch {
    throw new ProviderFlowError(def.oidc ? 'invalid_id_token' : 'token_exchange_failed');
  }
  if (!result.access_token) throw new ProviderFlowError('token_exchange_failed');

  const tokens: ProviderTokens = { accessToken: result.access_token };
  if (result.refresh_token) tokens.refreshToken = result.refresh_token;
  if (typeof result.expires_in === 'number')
    tokens.expiresAt = new Date(ctx.clock.nowMs() + result.expires_in * 1000);
  if (def.oidc)
    await verifyIdToken(ctx, { endpoints, issuer: as.issuer, config, nonce }, result.id_token!, tokens);
  return tokens;
}

/** The ID token's signature against the provider's keys, its claims with ctx.clock, and the nonce. */
async function verifyIdToken(
  ctx: AppContext,
  expected: { endpoints: ProviderEndpoints; issuer: string; config: OAuthProviderConfig; nonce?: string },
  idToken: string,
  tokens: ProviderTokens,
): Promise<void> {
  const { endpoints, config, nonce } = expected;
  if (!endpoints.jwksUrl) throw new ProviderFlowError('invalid_id_token');
  try {
    // The signature, against the provider's published keys; the claims once more with ctx.clock.
    const { payload } = await jwtVerify(idToken, jwksFor(endpoints.jwksUrl), {
      issuer: expected.issuer,
      audience: config.clientId,
      algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
      currentDate: ctx.clock.now(),
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    if (!nonce || typeof payload.nonce !== 'string' || !safeEqual(payload.nonce, nonce)) {
      throw new Error('nonce mismatch');
    }
    tokens.idToken = idToken;
    tokens.claims = payload as Record<string, unknown>;
  } catch {
    throw new ProviderFlowError('invalid_id_token');
  }
}

interface CodeGrant {
  def: OAuthProviderDefinition;
  config: OAuthProviderConfig;
  endpoints: ProviderEndpoints;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
}

/** The token request for `code`; any failure to get an OK answer is `token_exchange_failed`. */
async function requestCodeGrant(
  ctx: AppContext,
  grant: CodeGrant,
  input: { code: string; verifier: string | typeof oauth.nopkce; oauthCallbackId: string },
): Promise<Response> {
  const { def, config, endpoints, as, client } = grant;
  let response: Response;
  try {
    const secret = def.clientSecret ? await def.clientSecret(ctx, config, endpoints) : config.clientSecret;
    const auth =
      def.clientAuth === 'client_secret_basic'
        ? oauth.ClientSecretBasic(secret)
        : oauth.ClientSecretPost(secret);
    // Only the code goes on: the provider's other callback parameters were not asked for.
    const callback = oauth.validateAuthResponse(
      as,
      client,
      new URLSearchParams({ code: input.code }),
      oauth.expectNoState,
    );
    response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      callback,
      callbackUrl(ctx, input.oauthCallbackId, def.type),
      input.verifier,
      { [oauth.allowInsecureRequests]: insecure(endpoints.tokenUrl), signal: timeout() },
    );
  } catch {
    throw new ProviderFlowError('token_exchange_failed');
  }
  if (!response.ok) throw new ProviderFlowError('token_exchange_failed');
  return response;
}

/** The (unverified) claims of the ID token in a token response, read without consuming it. */
async function idTokenClaimsOf(response: Response): Promise<Record<string, unknown>> {
  const body = (await response
    .clone()
    .json()
    .catch(() => ({}))) as { id_token?: unknown };
  try {
    return typeof body.id_token === 'string' ? decodeJwt(body.id_token) : {};
  } catch {
    throw new ProviderFlowError('invalid_id_token');
  }
}

function timeout(): AbortSignal {
  return AbortSignal.timeout(defaults.providerRequestTimeoutMs);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/** GET a provider API with the user's access token; JSON only, 2xx only. */
async function fetchJson(url: string, accessToken: string): Promise<unknown> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    redirect: 'error',
    signal: timeout(),
  });
  if (!res.ok) throw new Error(`the provider answered ${res.status}`);
  return res.json();
}
