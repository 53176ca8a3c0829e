import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { InteractionGone } from './errors.js';
import { BoundedCache } from '../../lib/bounded-cache.js';
import { newId, randomAlphanumeric } from '../../lib/ids.js';
import { WALLET_PROVIDER } from '../../providers/types.js';
import { type Client, loadClient } from '../clients.js';
import { issueAuthorizationCode } from '../codes.js';
import { consentGrantOf, grantConsent, grantCovers } from '../consent.js';
import { STANDARD_SCOPES } from '../discovery.js';
import {
  continueSignedIn,
  finishesAlone,
  openSession,
  requestMeta,
  signInWithWalletAtOnce,
} from './complete.js';
import { flowBrowserMatches } from './flow-state.js';
import { unmetRequirementRedirect } from './requirement.js';
import { findSession } from './sessions.js';
import type { NewInteraction, SigninStores } from './stores.js';
import { issueWalletChallenge, redeemSignInProof } from './wallet-challenges.js';
import type { InteractionParams, InteractionRow } from '../../db/schema.js';

/** Whether a request's `prompt` (space-delimited, as authorize keeps it) holds `value`. */
export function hasPrompt(prompt: string | undefined, value: string): boolean {
  return prompt?.split(' ').includes(value) ?? false;
}

/** What the consent screen says for the OIDC standard scopes (brand scopes carry their own). */
export const STANDARD_SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Sign you in with your account',
  profile: 'See your name, username and profile picture',
  email: 'See your email address',
  offline_access: 'Stay signed in and keep access when you are away',
  wallet: 'See your wallet addresses',
  gates: "See which of the organization's access requirements your wallets meet",
};

export interface InteractionView {
  id: string;
  step: 'signin' | 'consent';
  brand: {
    slug: string;
    name: string;
    logoUrl?: string;
    primaryColor?: string;
    privacyPolicyUrl?: string;
    termsUrl?: string;
  };
  app: { clientId: string; name: string };
  scopes: Array<{ name: string; description: string }>;
  providers: string[];
  expiresAt: string;
}

/** 404 for an interaction that never existed, expired or was completed: all look the same. */
const interactionGone = () => new InteractionGone();

/** Interaction ids are bearer capabilities in URLs: 32 random alphanumerics (~190 bits). */
const INTERACTION_ID_LENGTH = 32;

export async function createInteraction(
  ctx: AppContext,
  input: {
    kind: 'authorize' | 'device';
    client: Client;
    params: InteractionParams;
    returnTo?: string;
    /** An existing session of the client's brand (the consent step comes next). */
    session?: { id: string; userId: string; authTime: number };
    /** SHA-256 of the browser-binding cookie (see flow-state.ts). */
    bindingHash?: string;
  },
): Promise<string> {
  const now = ctx.clock.now();
  const id = randomAlphanumeric(INTERACTION_ID_LENGTH);
  const row: NewInteraction = {
    id,
    kind: input.kind,
    app_id: input.client.appId,
    client_id: input.client.clientId,
    brand_id: input.client.brandId,
    params: input.params,
    return_to: input.returnTo ?? null,
    user_id: input.session?.userId ?? null,
    session_id: input.session?.id ?? null,
    auth_time: input.session ? new Date(input.session.authTime * 1000) : null,
    created_at: now,
    expires_at: new Date(now.getTime() + defaults.interactionTtl * 1000),
    completed_at: null,
    binding_hash: input.bindingHash ?? null,
  };
  await ctx.stores.signin.interactions.insert(row);
  rememberStarted(ctx, { ...row, params: row.params as unknown as InteractionRow['params'] });
  return id;
}

export interface LoadedInteraction {
  row: InteractionRow;
  params: InteractionParams;
  client: Client;
}

/** The live interaction and its (still enabled) client, or 404. */
export async function loadInteraction(ctx: AppContext, id: string): Promise<LoadedInteraction> {
  const row = await ctx.stores.signin.interactions.findLive(id, ctx.clock.now());
  if (!row) throw interactionGone();
  rememberStarted(ctx, row);
  return withClient(ctx, row);
}

async function withClient(ctx: AppContext, row: InteractionRow): Promise<LoadedInteraction> {
  const client = await loadClient(ctx, row.client_id);
  if (!client || client.appId !== row.app_id) throw interactionGone();
  return { row, params: row.params as unknown as InteractionParams, client };
}

/**
 * What an interaction started with never changes (kind, app, client, brand, parameters, return path,
 * browser binding, expiry), so each instance keeps it from /authorize or from its first read here,
 * until it expires: the wallet steps read nothing. Whether it is still live (not completed) is never
 * taken from memory: the challenge's insert and the sign-in's writes check it in their statements.
 * Per context: tests run several apps in one process.
 */
const startedInteractions = new WeakMap<AppContext, BoundedCache<InteractionRow>>();

function startedCache(ctx: AppContext): BoundedCache<InteractionRow> {
  let cache = startedInteractions.get(ctx);
  if (!cache) {
    cache = new BoundedCache(defaults.startedInteractionCacheMaxEntries);
    startedInteractions.set(ctx, cache);
  }
  return cache;
}

function rememberStarted(ctx: AppContext, row: InteractionRow): void {
  // Only the immutable part: who signed in, and when it completed, are the database's to say.
  const started = { ...row, user_id: null, session_id: null, auth_time: null, completed_at: null };
  startedCache(ctx).set(row.id, started, row.expires_at.getTime());
}

/**
 * The interaction as it started, for the wallet steps, with its (still enabled) client: from this
 * instance's memory, else read (404 unless live). Not proof that it is live now, nor of who signed in
 * on it: the step that uses it checks liveness in its own write (InteractionGone when it fails).
 */
export async function loadStartedInteraction(ctx: AppContext, id: string): Promise<LoadedInteraction> {
  const row = startedCache(ctx).get(id, ctx.clock.nowMs());
  return row ? withClient(ctx, row) : loadInteraction(ctx, id);
}

/**
 * Only the browser that started the interaction may read or continue it: its binding cookie, set by
 * `/oauth2/authorize` (or the device page), must come along (flow-state.ts). Checked before anything
 * is issued or consumed, so a link handed to another browser burns nothing.
 */
export function requireStartingBrowser(req: FastifyRequest, loaded: LoadedInteraction): void {
  if (!flowBrowserMatches(req, 'interaction', loaded.row.id, loaded.row.binding_hash))
    throw new ApiError(
      403,
      'forbidden',
      'this sign-in was started in another browser: start it again from the app, in this browser',
    );
}

/** Describes requested scopes for the consent screen, in request order. */
export async function describeScopes(
  ctx: AppContext,
  brandId: string,
  scopes: string[],
): Promise<Array<{ name: string; description: string }>> {
  const custom = scopes.some((s) => !(s in STANDARD_SCOPE_DESCRIPTIONS))
    ? await ctx.stores.signin.brands.scopeDescriptions(brandId)
    : new Map<string, string>();
  return scopes.map((name) => ({
    name,
    description: STANDARD_SCOPE_DESCRIPTIONS[name] ?? custom.get(name) ?? name,
  }));
}

/** Sign-in methods to offer: the brand's providerOrder, wallet always (first unless placed). */
export async function offeredProviders(
  ctx: AppContext,
  brandId: string,
  providerOrder: string[],
): Promise<string[]> {
  const enabled = new Set<string>([
    WALLET_PROVIDER,
    ...(await ctx.stores.signin.connections.enabledTypes(brandId)),
  ]);
  const ordered = providerOrder.filter((p) => enabled.has(p));
  if (!ordered.includes(WALLET_PROVIDER)) ordered.unshift(WALLET_PROVIDER);
  for (const p of enabled) if (!ordered.includes(p)) ordered.push(p);
  return [...new Set(ordered)];
}

export async function viewInteraction(ctx: AppContext, loaded: LoadedInteraction): Promise<InteractionView> {
  const { row, params, client } = loaded;
  const brand = await ctx.stores.signin.brands.presentation(row.brand_id);
  if (!brand) throw interactionGone();
  const view: InteractionView = {
    id: row.id,
    step: row.user_id ? 'consent' : 'signin',
    brand: { slug: brand.slug, name: brand.name },
    app: { clientId: client.clientId, name: client.name },
    scopes: await describeScopes(ctx, brand.id, params.scopes),
    providers: await offeredProviders(ctx, brand.id, brand.providerOrder),
    expiresAt: row.expires_at.toISOString(),
  };
  if (brand.logoUrl) view.brand.logoUrl = brand.logoUrl;
  if (brand.primaryColor) view.brand.primaryColor = brand.primaryColor;
  if (brand.privacyPolicyUrl) view.brand.privacyPolicyUrl = brand.privacyPolicyUrl;
  if (brand.termsUrl) view.brand.termsUrl = brand.termsUrl;
  return view;
}

export async function walletChallenge(
  ctx: AppContext,
  loaded: LoadedInteraction,
  address: string,
): Promise<{ message: string; expiresAt: string }> {
  const { client } = loaded;
  const c = await issueWalletChallenge(ctx.stores.signin, ctx.clock, ctx.config.baseUrl, {
    address,
    brand: { id: client.brandId, slug: client.brandSlug, name: client.brandName },
    purpose: 'signin',
    interactionId: loaded.row.id,
  });
  return { message: c.message, expiresAt: c.expiresAt.toISOString() };
}

/** Appends query parameters to a redirect URI, keeping its own query. */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}

/**
 * The account a verified wallet signs in to: its holder, a restored account, or a new user. `owner`
 * when the redemption looked for the holder already (and marked it seen): null for none.
 */
async function userForWallet(tx: SigninStores, ctx: AppContext, address: string, owner?: string | null) {
  const now = ctx.clock.now();
  // `seen`: the user's last_seen is now already (a returning holder is marked in the same statement).
  const holder = owner === undefined ? await tx.accounts.touchWalletOwner(address, now) : owner;
  if (holder) return { userId: holder, created: false, seen: true };
  const restored = await tx.accounts.restoreIfInGrace({ kind: 'wallet', address });
  const userId = restored ?? (await tx.accounts.create({})).id;
  if (await tx.accounts.insertPrimaryWallet({ id: newId('pk_'), userId, address, now })) {
    return { userId, created: !restored, seen: !restored };
  }
  // Another sign-in with this wallet committed first: it owns the wallet; drop what we made.
  const winner = await tx.accounts.walletOwner(address);
  if (!winner) throw new ApiError(409, 'conflict', 'the wallet is being linked by another request; retry');
  if (!restored) await tx.accounts.discard(userId);
  return { userId: winner, created: false, seen: false };
}

/**
 * Step 4: verifies the wallet's proof, signs the browser in to the brand (a fresh session replaces
 * any previous one) and moves the interaction on. A failed proof still burns the challenge.
 */
export async function verifyWallet(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  body: { address: string; signature: string; signedMessage: string },
): Promise<{ step: 'consent' | 'done'; redirectTo?: string }> {
  const brandId = loaded.client.brandId;
  // A returning wallet whose sign-in needs no further step: one statement, no transaction.
  const atOnce = finishesAlone(req, loaded) ? await signInWithWalletAtOnce(ctx, req, loaded, body) : null;
  if (atOnce && 'session' in atOnce) {
    ctx.metrics.signIn('wallet', 'succeeded');
    return continueSignedIn(ctx, reply, loaded, atOnce);
  }
  const outcome = await ctx.stores.signin.atomic(async (tx) => {
    // A new wallet whose challenge that statement consumed already, or the step-by-step redemption.
    let redeemed: { address: string; owner?: string | null };
    try {
      redeemed = atOnce ?? (await redeemSignInProof(tx, ctx.clock, { ...body, brandId, purpose: 'signin' }));
    } catch (err) {
      // Commit the consumption (when it happened) and report the failure after the transaction.
      if (err instanceof ApiError && err.status === 400) return { error: err };
      throw err;
    }
    const { userId, seen } = await userForWallet(tx, ctx, redeemed.address, redeemed.owner);
    return openSession(tx, ctx, req, loaded, { userId, provider: WALLET_PROVIDER, seen });
  });
  ctx.metrics.signIn('wallet', 'error' in outcome ? 'failed' : 'succeeded');
  if ('error' in outcome) {
    await recordFailedWalletSignIn(ctx, req, body.address);
    throw outcome.error;
  }
  return continueSignedIn(ctx, reply, loaded, outcome);
}

/** A failed proof goes in the history of the account holding the wallet, when one does. */
async function recordFailedWalletSignIn(ctx: AppContext, req: FastifyRequest, address: unknown) {
  const accounts = ctx.stores.signin.accounts;
  const known = isSolanaLike(address) ? await accounts.walletOwner(address) : null;
  if (!known) return;
  await accounts.recordActivity({
    userId: known,
    type: 'sign_in_failed',
    provider: WALLET_PROVIDER,
    ...requestMeta(req),
  });
}

function isSolanaLike(address: unknown): address is string {
  return typeof address === 'string' && address.length <= 44;
}

/** Consent is asked unless the app is first-party, a device flow, or already holds every scope. */
export async function needsConsent(ctx: AppContext, loaded: LoadedInteraction): Promise<boolean> {
  const { row, params, client } = loaded;
  if (row.kind === 'device' || client.firstParty) return false;
  if (hasPrompt(params.prompt, 'consent')) return true;
  const grant = await consentGrantOf(ctx, row.user_id!, client.appId);
  return !grant || !grantCovers(grant, params.scopes);
}

/**
 * Completes the interaction once and returns where the browser goes: the client's redirect URI
 * with a fresh code (authorize), or the device page (device).
 */
export async function finish(ctx: AppContext, loaded: LoadedInteraction): Promise<string> {
  const { row, params, client } = loaded;
  if (!(await ctx.stores.signin.interactions.complete(row.id, ctx.clock.now()))) throw interactionGone();
  if (row.kind === 'device') return `${ctx.config.baseUrl}${row.return_to ?? '/device'}`;
  const code = await issueAuthorizationCode(ctx, {
    client,
    userId: row.user_id!,
    redirectUri: params.redirectUri,
    scopes: params.scopes,
    nonce: params.nonce,
    codeChallenge: params.codeChallenge,
    authTime: Math.floor(row.auth_time!.getTime() / 1000),
    sessionId: row.session_id ?? undefined,
  });
  return withQuery(params.redirectUri, { code, state: params.state, iss: ctx.config.issuer });
}

/**
 * Step 5: the signed-in browser (its session cookie must be the interaction's) allows or denies.
 * Allow records the grant (consent.granted with the new scopes) and issues the code; deny
 * redirects with access_denied.
 */
export async function decideConsent(
  ctx: AppContext,
  req: FastifyRequest,
  loaded: LoadedInteraction,
  decision: 'allow' | 'deny',
): Promise<{ redirectTo: string }> {
  const { row, params, client } = loaded;
  if (!row.user_id) {
    throw new ApiError(409, 'conflict', 'sign in before answering the consent request');
  }
  const session = await findSession(ctx, req, client.brandId);
  if (!session || session.id !== row.session_id) {
    throw new ApiError(401, 'unauthorized', 'this browser is not signed in to this interaction');
  }
  if (decision === 'allow') {
    const unmet = await unmetRequirementRedirect(ctx, loaded, row.user_id);
    if (unmet) return { redirectTo: unmet };
  }
  if (row.kind === 'device') return { redirectTo: await finish(ctx, loaded) };
  if (decision === 'deny') {
    if (!(await ctx.stores.signin.interactions.complete(row.id, ctx.clock.now()))) throw interactionGone();
    return {
      redirectTo: withQuery(params.redirectUri, {
        error: 'access_denied',
        error_description: 'the user denied the request',
        state: params.state,
        iss: ctx.config.issuer,
      }),
    };
  }
  await ctx.db.transaction().execute((trx) =>
    grantConsent(ctx, trx, {
      user: { id: row.user_id! },
      app: { appId: client.appId, clientId: client.clientId, orgId: client.orgId },
      scopes: params.scopes,
    }),
  );
  return { redirectTo: await finish(ctx, loaded) };
}

/** Standard scopes the issuer knows without a brand vocabulary. */
export const KNOWN_STANDARD_SCOPES = new Set<string>(STANDARD_SCOPES);
