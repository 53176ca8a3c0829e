import type { AppContext } from '../../context.js';
import { parseBearer } from '../../http/auth.js';
import { invalidToken, notFound } from '../../http/errors.js';
import { revokeConsentGrant } from '../../oidc/consent.js';

export interface ConsentGrantView {
  id: string;
  user: string;
  app: string;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

/** The user's grants (DESIGN.md §4 record), newest first. */
export async function listConsentGrants(ctx: AppContext, userId: string): Promise<ConsentGrantView[]> {
  const rows = await ctx.stores.consent.listOfUser(userId);
  return rows.map((r) => ({
    id: r.id,
    user: r.user_id,
    app: r.client_id,
    scopes: r.scopes,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
}

/**
 * Revokes the user's grant to an app (client id): `consent.revoked` fires and the tokens it backs
 * are revoked. 404 when there is no such grant. `actorUserId` is null when the app revokes.
 */
export async function revokeGrant(
  ctx: AppContext,
  userId: string,
  clientId: string,
  actorUserId: string | null,
): Promise<void> {
  const revoked = await ctx.db
    .transaction()
    .execute((trx) => revokeConsentGrant(ctx, trx, { userId, appId: clientId, actorUserId }));
  if (!revoked) throw notFound('consent grant');
}

/**
 * The calling app of `DELETE /users/:userId/consent-grants/:appId`: a client-credentials access
 * token (RS256 by our keys, our issuer, `typ` at+jwt, `sub` = `client_id`, the audience its brand),
 * of an enabled, live app, passing the issuer's revocation checks. Returns its client id.
 */
export async function verifyAppToken(ctx: AppContext, authorization: string | undefined): Promise<string> {
  const token = parseBearer(authorization);
  if (!token) throw invalidToken('an access token from the client credentials grant is required');
  const claims = await ctx.verifyAccessToken(token);
  if (!claims || claims.sub !== claims.client_id) throw invalidToken();
  // The issuer's client store (the apps module's SQL): a live, enabled app of a live brand.
  const app = await ctx.stores.clients.find(claims.client_id as string);
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!app || !aud.includes(app.brandSlug)) throw invalidToken();
  return app.clientId;
}
