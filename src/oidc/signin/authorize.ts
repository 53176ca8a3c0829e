import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { PROVIDER_TYPES, WALLET_PROVIDER } from '../../providers/types.js';
import { type Client, loadClient } from '../clients.js';
import { consentGrantOf, grantCovers } from '../consent.js';
import { meetsRequirement, UNMET_REQUIREMENT } from '../gates.js';
import { newFlowBinding } from './flow-state.js';
import {
  KNOWN_STANDARD_SCOPES,
  createInteraction,
  finish,
  loadInteraction,
  withQuery,
  hasPrompt,
} from './interactions.js';
import type { InteractionParams } from '../../db/schema.js';
import { findSession } from './sessions.js';
import { readIdTokenHint } from '../jwt.js';

/**
 * The authorize endpoint as a pipeline of small checks. Errors about the client or the redirect URI
 * are shown to the user (never redirected: the URI is not trusted yet); every later error goes back
 * to the client's redirect URI with `state` and `iss` (RFC 9207).
 */
export type AuthorizeOutcome =
  | { kind: 'page'; error: string; description: string }
  | {
      kind: 'redirect';
      location: string;
      /** Set on the browser with the redirect to the sign-in page (see flow-state.ts). */
      binding?: { interactionId: string; value: string };
    };

class Refusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);
const PROVIDERS = new Set<string>([WALLET_PROVIDER, ...PROVIDER_TYPES]);
/** base64url of a SHA-256 digest: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_PARAM_LENGTH = 2048;
/** An ID token with profile and wallet claims can pass 2 KB; /oauth2/logout takes the same 8 KB. */
const MAX_LENGTH: Record<string, number> = { id_token_hint: 8192 };

/**
 * The parameters as given, duplicates kept (Fastify's parser would merge them into arrays): the
 * query of a GET, the form body of a POST (OIDC Core §3.1.2.1: both methods, same parameters).
 */
function rawParams(req: FastifyRequest): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (k: string, v: string) => {
    const list = out.get(k);
    if (list) list.push(v);
    else out.set(k, [v]);
  };
  if (req.method === 'POST') {
    for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
      for (const one of Array.isArray(v) ? v : [v]) add(k, String(one));
    }
    return out;
  }
  const q = req.url.indexOf('?');
  if (q < 0) return out;
  for (const [k, v] of new URLSearchParams(req.url.slice(q + 1))) add(k, v);
  return out;
}

function single(params: Map<string, string[]>, name: string): string | undefined {
  const v = params.get(name);
  if (!v) return undefined;
  if (v.length > 1) throw new Refusal('invalid_request', `${name} is given more than once`);
  if (v[0].length > (MAX_LENGTH[name] ?? MAX_PARAM_LENGTH))
    throw new Refusal('invalid_request', `${name} is too long`);
  return v[0] === '' ? undefined : v[0];
}

/** Client and redirect URI: failures here are answered on a page. */
async function checkClient(
  ctx: AppContext,
  params: Map<string, string[]>,
): Promise<{ client: Client; redirectUri: string }> {
  const clientId = single(params, 'client_id');
  if (!clientId) throw new Refusal('invalid_request', 'client_id is required');
  const client = await loadClient(ctx, clientId);
  if (!client) throw new Refusal('invalid_client', 'unknown or disabled client');
  const redirectUri = single(params, 'redirect_uri');
  if (!redirectUri) throw new Refusal('invalid_request', 'redirect_uri is required');
  // Exact string comparison: no normalisation of case, slashes, ports, queries or userinfo.
  if (!client.redirectUris.includes(redirectUri)) {
    throw new Refusal('invalid_request', 'redirect_uri is not registered for this client');
  }
  return { client, redirectUri };
}

async function checkScopes(ctx: AppContext, client: Client, raw: string | undefined): Promise<string[]> {
  if (!raw) throw new Refusal('invalid_request', 'scope is required');
  const scopes = [...new Set(raw.split(' ').filter(Boolean))];
  if (scopes.length === 0) throw new Refusal('invalid_request', 'scope is required');
  const allowed = new Set(client.allowedScopes);
  const custom = scopes.some((s) => !KNOWN_STANDARD_SCOPES.has(s))
    ? await ctx.stores.signin.brands.scopeDescriptions(client.brandId)
    : new Map<string, string>();
  const bad = scopes.filter((s) => !allowed.has(s) || !(KNOWN_STANDARD_SCOPES.has(s) || custom.has(s)));
  if (bad.length) throw new Refusal('invalid_scope', `scope not allowed for this client: ${bad.join(' ')}`);
  return scopes;
}

function checkPkce(
  client: Client,
  challenge: string | undefined,
  method: string | undefined,
): string | undefined {
  if (method !== undefined && method !== 'S256') {
    throw new Refusal('invalid_request', 'code_challenge_method must be S256');
  }
  if (challenge === undefined) {
    if (method !== undefined)
      throw new Refusal('invalid_request', 'code_challenge is required with its method');
    if (!client.isConfidential) throw new Refusal('invalid_request', 'code_challenge (S256) is required');
    return undefined;
  }
  if (method === undefined) throw new Refusal('invalid_request', 'code_challenge_method is required');
  if (!S256_CHALLENGE.test(challenge)) {
    throw new Refusal('invalid_request', 'code_challenge must be a base64url SHA-256 digest');
  }
  return challenge;
}

/**
 * OIDC Core §3.1.2.1 `prompt`: a space-delimited set of none, login, consent and select_account,
 * `none` alone. Kept as given (deduplicated) and read with hasPrompt.
 */
function checkPrompt(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const values = [...new Set(raw.split(' ').filter(Boolean))];
  if (values.length === 0 || values.some((v) => !PROMPTS.has(v))) {
    throw new Refusal('invalid_request', 'prompt must be one of none, login, consent, select_account');
  }
  if (values.includes('none') && values.length > 1)
    throw new Refusal('invalid_request', 'prompt=none cannot be combined with another value');
  return values.join(' ');
}

/** Only `query` is supported (discovery's response_modes_supported); anything else is refused. */
function checkResponseMode(raw: string | undefined): void {
  if (raw !== undefined && raw !== 'query')
    throw new Refusal('invalid_request', 'response_mode must be query, the only one supported');
}

/** OIDC Core §3.1.2.1 `max_age`: seconds since the last active authentication, at most 10 digits. */
function checkMaxAge(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,10}$/.test(raw))
    throw new Refusal('invalid_request', 'max_age must be a whole number of seconds');
  return Number(raw);
}

/** Whether a session's authentication is too old for `max_age` (0 always is: it means prompt=login). */
function tooOld(ctx: AppContext, authTime: number, maxAge: number | undefined): boolean {
  if (maxAge === undefined) return false;
  return maxAge === 0 || ctx.clock.nowSec() - authTime > maxAge;
}

/** The request's parameters checked against the client (any failure is a Refusal). */
async function checkRequest(
  ctx: AppContext,
  client: Client,
  params: Map<string, string[]>,
  redirectUri: string,
  state: string | undefined,
): Promise<{ interactionParams: InteractionParams; maxAge: number | undefined }> {
  for (const [name, values] of params) {
    if (values.length > 1) throw new Refusal('invalid_request', `${name} is given more than once`);
  }
  // Request objects are not supported (discovery says so); OIDC Core §6.1/§6.2 name the errors.
  if (single(params, 'request') !== undefined)
    throw new Refusal('request_not_supported', 'request objects are not supported');
  if (single(params, 'request_uri') !== undefined)
    throw new Refusal('request_uri_not_supported', 'request_uri is not supported');
  const responseType = single(params, 'response_type');
  if (!responseType) throw new Refusal('invalid_request', 'response_type is required');
  if (responseType !== 'code')
    throw new Refusal('unsupported_response_type', 'only response_type=code is supported');
  checkResponseMode(single(params, 'response_mode'));
  if (!client.allowedGrantTypes.includes('authorization_code')) {
    throw new Refusal('unauthorized_client', 'this client may not use the authorization code grant');
  }
  if (!single(params, 'state')) throw new Refusal('invalid_request', 'state is required');
  const scopes = await checkScopes(ctx, client, single(params, 'scope'));
  const codeChallenge = checkPkce(
    client,
    single(params, 'code_challenge'),
    single(params, 'code_challenge_method'),
  );
  const prompt = checkPrompt(single(params, 'prompt'));
  const maxAge = checkMaxAge(single(params, 'max_age'));
  const provider = single(params, 'provider');
  if (provider !== undefined && !PROVIDERS.has(provider)) {
    throw new Refusal('invalid_request', 'provider is not a known sign-in method');
  }
  const interactionParams: InteractionParams = {
    redirectUri,
    scopes,
    state,
    nonce: single(params, 'nonce'),
    codeChallenge,
    prompt,
    loginHint: single(params, 'login_hint'),
    provider,
    uiLocales: single(params, 'ui_locales'),
  };
  const hint = single(params, 'id_token_hint');
  if (hint !== undefined) {
    const named = await readIdTokenHint(ctx.keys, hint, ctx.config.issuer);
    if (!named) throw new Refusal('invalid_request', 'id_token_hint is not an ID token of this issuer');
    interactionParams.idTokenHintSub = named.sub;
  }
  return { interactionParams, maxAge };
}

/**
 * A checked request: with a session of the brand that covers the scopes, straight back with a code;
 * otherwise to the hosted sign-in (or, with prompt=none, the error).
 */
async function proceed(
  ctx: AppContext,
  req: FastifyRequest,
  client: Client,
  interactionParams: InteractionParams,
  maxAge: number | undefined,
): Promise<AuthorizeOutcome> {
  const { prompt, scopes } = interactionParams;
  // The interaction is bound to this browser: only it may complete a provider sign-in.
  const binding = newFlowBinding();
  const toSignin = (id: string, page = ''): AuthorizeOutcome => ({
    kind: 'redirect',
    location: `${ctx.config.baseUrl}/signin/${id}${page}`,
    binding: { interactionId: id, value: binding.value },
  });
  // prompt=login, and a session authenticated longer ago than max_age, need a fresh sign-in: the
  // session is not used (the new sign-in replaces it, with a new auth_time).
  // An id_token_hint names the user the client expects: a session of anyone else is not used.
  const live =
    hasPrompt(prompt, 'login') || hasPrompt(prompt, 'select_account')
      ? null
      : await findSession(ctx, req, client.brandId);
  const hinted = interactionParams.idTokenHintSub;
  const session =
    live && !tooOld(ctx, live.authTime, maxAge) && (!hinted || hinted === live.userId) ? live : null;
  if (prompt === 'none' && !session) throw new Refusal('login_required', 'no active session for this brand');
  if (!session) {
    const id = await createInteraction(ctx, {
      kind: 'authorize',
      client,
      params: interactionParams,
      bindingHash: binding.hash,
    });
    return toSignin(id);
  }
  // The app's required gate policy, before consent (DESIGN §3): with prompt=none straight back.
  const meets = await meetsRequirement(ctx, client, session.userId);
  if (prompt === 'none' && !meets) throw new Refusal('access_denied', UNMET_REQUIREMENT);
  const covered =
    client.firstParty || grantCovers(await consentGrantOf(ctx, session.userId, client.appId), scopes);
  if (prompt === 'none' && !covered)
    throw new Refusal('consent_required', 'the user has not consented to these scopes');
  const id = await createInteraction(ctx, {
    kind: 'authorize',
    client,
    params: interactionParams,
    session,
    bindingHash: binding.hash,
  });
  if (!meets) return toSignin(id, '/unmet');
  if (covered && !hasPrompt(prompt, 'consent')) {
    return { kind: 'redirect', location: await finish(ctx, await loadInteraction(ctx, id)) };
  }
  return toSignin(id);
}

export async function authorize(ctx: AppContext, req: FastifyRequest): Promise<AuthorizeOutcome> {
  const params = rawParams(req);
  let client: Client;
  let redirectUri: string;
  try {
    ({ client, redirectUri } = await checkClient(ctx, params));
  } catch (err) {
    if (err instanceof Refusal) return { kind: 'page', error: err.error, description: err.description };
    throw err;
  }

  // From here on the redirect URI is trusted: errors go back to it, with state if it was readable.
  const stateValues = params.get('state');
  const state = stateValues?.length === 1 ? stateValues[0] || undefined : undefined;
  try {
    const { interactionParams, maxAge } = await checkRequest(ctx, client, params, redirectUri, state);
    return await proceed(ctx, req, client, interactionParams, maxAge);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const query = { error: err.error, error_description: err.description, state, iss: ctx.config.issuer };
    return { kind: 'redirect', location: withQuery(redirectUri, query) };
  }
}
