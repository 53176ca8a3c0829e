import { forgetInterest } from '../../src/modules/webhooks/webhooks.service.js';
import { defaults } from '../../src/config/defaults.js';
import { sha256 } from '../../src/lib/hash.js';
import { newId, newSecret, randomAlphanumeric } from '../../src/lib/ids.js';
import { type Client, invalidateClient, loadClient } from '../../src/oidc/clients.js';
import { type TestApp, userChangedBehindTheApp } from './app.js';

export interface TestBrand {
  id: string;
  orgId: string;
  slug: string;
}

export interface TestClient {
  appId: string;
  clientId: string;
  /** Undefined for public clients. */
  clientSecret?: string;
  brand: TestBrand;
  redirectUri: string;
}

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const ALL_GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_GRANT];

/** A brand in a new org (or `orgId`), inserted directly: the brands routes have their own tests. */
export async function createBrand(
  t: TestApp,
  opts: { orgId?: string; slug?: string } = {},
): Promise<TestBrand> {
  const now = t.clock.now();
  let orgId = opts.orgId;
  if (!orgId) {
    orgId = newId('org_');
    const orgSlug = `org-${randomAlphanumeric(8).toLowerCase()}`;
    await t.ctx.db
      .insertInto('orgs')
      .values({
        id: orgId,
        name: orgSlug,
        slug: orgSlug,
        slug_claim: orgSlug,
        description: null,
        icon_file_id: null,
        created_by: 'test',
        payment_product_id: null,
        payment_customer_id: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
  }
  const id = newId('brand_');
  const slug = opts.slug ?? `brand-${randomAlphanumeric(8).toLowerCase()}`;
  await t.ctx.db
    .insertInto('brands')
    .values({
      id,
      org_id: orgId,
      slug,
      name: `Brand ${slug}`,
      oauth_callback_id: newId(),
      logo_file_id: null,
      primary_color: null,
      support_email: null,
      privacy_policy_url: null,
      terms_url: null,
      provider_order: ['solana'],
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  return { id, orgId, slug };
}

/** An app (OAuth client) inserted directly; confidential by default with every grant allowed. */
export async function createApp(
  t: TestApp,
  brand: TestBrand,
  opts: { confidential?: boolean; grants?: string[]; scopes?: string[]; redirectUris?: string[] } = {},
): Promise<TestClient> {
  const now = t.clock.now();
  const confidential = opts.confidential ?? true;
  const clientSecret = confidential ? newSecret() : undefined;
  const appId = newId('app_');
  const clientId = `cl_${randomAlphanumeric(16)}`;
  const redirectUris = opts.redirectUris ?? ['https://rp.example/callback'];
  await t.ctx.db
    .insertInto('apps')
    .values({
      id: appId,
      org_id: brand.orgId,
      brand_id: brand.id,
      client_id: clientId,
      client_secret_hash: clientSecret ? sha256(clientSecret) : null,
      name: `App ${clientId}`,
      type: confidential ? 'web' : 'native',
      is_confidential: confidential,
      redirect_uris: redirectUris,
      allowed_grant_types: opts.grants ?? ALL_GRANTS,
      allowed_scopes: opts.scopes ?? [
        'openid',
        'profile',
        'email',
        'offline_access',
        'orders:read',
        'orders:write',
      ],
      enabled: true,
      first_party: false,
      description: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  return { appId, clientId, clientSecret, brand, redirectUri: redirectUris[0] };
}

/** The cached Client of a test client (what the issuer sees). */
export async function clientOf(t: TestApp, c: TestClient): Promise<Client> {
  const client = await loadClient(t.ctx, c.clientId);
  if (!client) throw new Error(`client ${c.clientId} is not live`);
  return client;
}

/** Disables an app as the apps module would, and drops it from the issuer's cache. */
export async function disableApp(t: TestApp, c: TestClient): Promise<void> {
  await t.ctx.db.updateTable('apps').set({ enabled: false }).where('id', '=', c.appId).execute();
  invalidateClient(t.ctx, c.clientId);
}

/** `Authorization: Basic` for a client, both parts form-urlencoded (RFC 6749 §2.3.1). */
export function basicAuth(clientId: string, secret = ''): { authorization: string } {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return { authorization: `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}` };
}

/** A form-encoded request body and its content type, for `app.inject`. */
export function form(fields: Record<string, string | undefined>): {
  headers: { 'content-type': string };
  payload: string;
} {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) p.append(k, v);
  return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: p.toString() };
}

export { freePort } from './net.js';

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = newSecret() + newSecret().slice(0, 10);
  const challenge = Buffer.from(sha256Bytes(verifier)).toString('base64url');
  return { verifier, challenge };
}

function sha256Bytes(s: string): Buffer {
  return Buffer.from(sha256(s), 'hex');
}

/** Sets a user's profile fields directly. */
export async function setProfile(
  t: TestApp,
  userId: string,
  fields: {
    first_name?: string | null;
    last_name?: string | null;
    email?: string | null;
    email_verified?: boolean;
    external_profile_picture_url?: string | null;
    preferred_language?: string | null;
  },
): Promise<void> {
  await t.ctx.db.updateTable('users').set(fields).where('id', '=', userId).execute();
  await userChangedBehindTheApp(t, userId);
}

export const ACCESS_TOKEN_TTL = defaults.accessTokenTtl;

/**
 * Subscribes a webhook of the org to the high-volume `token.*` events (recorded only when someone
 * listens). The URL is loopback, so deliveries are refused before connecting and never leave the test.
 */
export async function subscribeTokenEvents(t: TestApp, orgId: string): Promise<void> {
  const now = t.clock.now();
  const events = ['token.issued', 'token.refreshed'];
  await t.ctx.db
    .insertInto('webhooks' as never)
    .values({
      id: `wh_test_${orgId}`,
      org_id: orgId,
      url: 'https://127.0.0.1:9/token-events',
      events,
      events_key: events.join(','),
      secret_enc: t.ctx.encryptor.encrypt('whsec_test'),
      created_at: now,
      updated_at: now,
    } as never)
    .onConflict((oc) => oc.doNothing())
    .execute();
  forgetInterest(orgId);
}

/**
 * Whether a JWT (a base64url JSON header, `eyJ…`, then two dot-separated parts) appears anywhere in
 * the value's JSON. Not a bare `eyJ`: a random 20-character id holds one about once in 13,000.
 */
export function holdsJwt(value: unknown): boolean {
  return /eyJ[\w-]*\.[\w-]*\./.test(JSON.stringify(value));
}
