import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { queueBackchannelLogout, revokeSessionTokens } from '../backchannel.js';
import { type Client, loadClient } from '../clients.js';
import { readIdTokenHint } from '../jwt.js';
import type { Tx } from '../stores.js';
import { findSession, requestSessionCookies } from './sessions.js';
import type { EndedSession } from './stores.js';

/**
 * Ends sessions as logout does (DESIGN.md §3): the rows go, the refresh and access tokens issued in
 * them are revoked (their unredeemed codes burnt), and every app that was issued tokens in them and
 * has a back-channel receiver gets a logout token from the outbox, all in one transaction (`tx`, or
 * one of its own).
 */
export function endSessions(ctx: AppContext, ids: string[], tx?: Tx): Promise<EndedSession[]> {
  const run = async (t: Tx) => {
    // Codes before sessions: the token step's one statement locks its code, then the code's session
    // (authorization-codes.store.ts). Logout locking them in the other order could deadlock with a
    // code redeemed at that moment; in this order the redemption either waits and finds its code
    // burnt, or commits first and its access token is among those revoked below.
    await ctx.stores.revocations.burnCodesOfSessions(t, ids, ctx.clock.now());
    const ended = await ctx.stores.signin.on(t).sessions.end(ids);
    await revokeSessionTokens(
      ctx,
      t,
      ended.map((s) => s.id),
    );
    await queueBackchannelLogout(
      ctx,
      t,
      ended.flatMap((s) => s.clientIds.map((clientId) => ({ sessionId: s.id, userId: s.userId, clientId }))),
    );
    return ended;
  };
  return tx ? run(tx) : ctx.stores.transaction(run);
}

/** Every session of the user, on every brand, ended as logout does (account deletion), in `tx`. */
export async function endUserSessions(ctx: AppContext, tx: Tx, userId: string): Promise<EndedSession[]> {
  return endSessions(ctx, await ctx.stores.signin.on(tx).sessions.idsOfUser(userId), tx);
}

/** The parameters of RP-Initiated Logout 1.0 §2 (query of a GET, form of a POST). */
export interface LogoutParams {
  id_token_hint?: string;
  client_id?: string;
  post_logout_redirect_uri?: string;
  state?: string;
  logout_hint?: string;
  ui_locales?: string;
}

export type LogoutOutcome =
  /** Nothing was ended: an HTML page with status 400 (never a redirect). */
  | { kind: 'error'; error: string; description: string; brandId: string | null }
  | {
      kind: 'done';
      /** Where the browser goes (the registered post-logout URI with `state`), else the signed-out page. */
      location: string | null;
      /** The brands whose session cookie to clear. */
      brandIds: string[];
      /** The brand the signed-out page wears. */
      brandId: string | null;
    };

class LogoutRefusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly brandId: string | null = null,
  ) {
    super(description);
  }
}

interface CheckedLogout {
  client: Client | null;
  hint: { sub: string; aud: string; sid?: string } | null;
  location: string | null;
}

/** Everything about the request that can be wrong, checked before anything is ended. */
async function checkLogout(ctx: AppContext, p: LogoutParams): Promise<CheckedLogout> {
  let hint: CheckedLogout['hint'] = null;
  if (p.id_token_hint) {
    hint = await readIdTokenHint(ctx.keys, p.id_token_hint, ctx.config.issuer);
    if (!hint)
      throw new LogoutRefusal('invalid_request', 'id_token_hint is not an ID token this service issued');
  }
  if (hint && p.client_id && p.client_id !== hint.aud)
    throw new LogoutRefusal('invalid_request', 'client_id is not the audience of id_token_hint');
  const clientId = hint?.aud ?? p.client_id;
  const client = clientId ? await loadClient(ctx, clientId) : null;
  if (clientId && !client) throw new LogoutRefusal('invalid_client', 'unknown or disabled client');
  const uri = p.post_logout_redirect_uri;
  if (uri === undefined) return { client, hint, location: null };
  if (!client)
    throw new LogoutRefusal('invalid_request', 'post_logout_redirect_uri needs id_token_hint or client_id');
  // Exact string comparison, as for redirect URIs.
  if (!(client.postLogoutRedirectUris ?? []).includes(uri))
    throw new LogoutRefusal(
      'invalid_request',
      'post_logout_redirect_uri is not registered for this client',
      client.brandId,
    );
  const location = new URL(uri);
  if (p.state !== undefined) location.searchParams.append('state', p.state);
  return { client, hint, location: location.toString() };
}

/** The brands of the session cookies the browser sent (their names carry the brand id). */
function cookieBrands(req: FastifyRequest): string[] {
  return requestSessionCookies(req).map((c) => c.brandId);
}

/**
 * Which sessions the logout ends. With an app: the browser's session of the app's brand (when the
 * hint names a user, only theirs), and the session the hint's `sid` names when it is that user's on
 * that brand (an app that signs out from a server has no cookie). Without: every session the
 * browser holds.
 */
async function sessionsToEnd(
  ctx: AppContext,
  req: FastifyRequest,
  c: CheckedLogout,
): Promise<{ ids: string[]; brandIds: string[] }> {
  if (!c.client) {
    const found = await Promise.all(cookieBrands(req).map((brandId) => findSession(ctx, req, brandId)));
    const live = found.filter((s) => s !== null);
    return { ids: live.map((s) => s.id), brandIds: cookieBrands(req) };
  }
  const brandId = c.client.brandId;
  const ids: string[] = [];
  const own = await findSession(ctx, req, brandId);
  if (own && (!c.hint || own.userId === c.hint.sub)) ids.push(own.id);
  if (c.hint?.sid && !ids.includes(c.hint.sid)) {
    const named = await ctx.stores.signin.sessions.find(c.hint.sid);
    if (named && named.userId === c.hint.sub && named.brandId === brandId) ids.push(named.id);
  }
  return { ids, brandIds: own && ids.includes(own.id) ? [brandId] : [] };
}

/** GET|POST /oauth2/logout (OpenID RP-Initiated Logout 1.0). */
export async function rpInitiatedLogout(
  ctx: AppContext,
  req: FastifyRequest,
  p: LogoutParams,
): Promise<LogoutOutcome> {
  let checked: CheckedLogout;
  try {
    checked = await checkLogout(ctx, p);
  } catch (err) {
    if (!(err instanceof LogoutRefusal)) throw err;
    return { kind: 'error', error: err.error, description: err.description, brandId: err.brandId };
  }
  const { ids, brandIds } = await sessionsToEnd(ctx, req, checked);
  if (ids.length > 0) await endSessions(ctx, ids);
  return {
    kind: 'done',
    location: checked.location,
    brandIds,
    brandId: checked.client?.brandId ?? (brandIds.length === 1 ? brandIds[0] : null),
  };
}
