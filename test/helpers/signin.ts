import { randomBytes } from 'node:crypto';
import { sha256 } from '../../src/lib/hash.js';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import type { TestApp } from './app.js';
import { createUser } from './app.js';
import { seedOrg } from './fixtures.js';

export interface SeededClient {
  orgId: string;
  brandId: string;
  brandSlug: string;
  brandName: string;
  appId: string;
  clientId: string;
  /** Plaintext secret of a confidential client. */
  clientSecret?: string;
  redirectUri: string;
}

export interface SeedClientOptions {
  orgId?: string;
  brandId?: string;
  confidential?: boolean;
  firstParty?: boolean;
  redirectUris?: string[];
  grantTypes?: string[];
  scopes?: string[];
  brand?: {
    name?: string;
    primaryColor?: string | null;
    privacyPolicyUrl?: string | null;
    termsUrl?: string | null;
    providerOrder?: string[];
  };
}

/**
 * An org (unless given), a brand (unless given) and an enabled app, inserted directly so sign-in
 * flows can be tested without the management routes.
 */
export async function seedClient(t: TestApp, opts: SeedClientOptions = {}): Promise<SeededClient> {
  const now = t.clock.now();
  const orgId = opts.orgId ?? (await seedOrg(t, await createUser(t))).id;
  let brandId = opts.brandId;
  let brandSlug = '';
  let brandName = '';
  if (!brandId) {
    brandId = newId('brand_');
    brandSlug = `brand-${randomAlphanumeric(8).toLowerCase()}`;
    brandName = opts.brand?.name ?? `Brand ${brandSlug}`;
    await t.ctx.db
      .insertInto('brands')
      .values({
        id: brandId,
        org_id: orgId,
        slug: brandSlug,
        name: brandName,
        oauth_callback_id: randomAlphanumeric(16),
        logo_file_id: null,
        primary_color: opts.brand?.primaryColor ?? '#1a73e8',
        support_email: null,
        privacy_policy_url: opts.brand?.privacyPolicyUrl ?? 'https://example.com/privacy',
        terms_url: opts.brand?.termsUrl ?? 'https://example.com/terms',
        provider_order: opts.brand?.providerOrder ?? ['solana'],
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
  } else {
    const b = await t.ctx.db
      .selectFrom('brands')
      .select(['slug', 'name'])
      .where('id', '=', brandId)
      .executeTakeFirstOrThrow();
    brandSlug = b.slug;
    brandName = b.name;
  }
  const confidential = opts.confidential ?? false;
  const clientSecret = confidential ? randomBytes(32).toString('base64url') : undefined;
  const appId = newId('app_');
  const clientId = `cl_${randomAlphanumeric(16)}`;
  const redirectUris = opts.redirectUris ?? ['https://app.example.com/callback'];
  await t.ctx.db
    .insertInto('apps')
    .values({
      id: appId,
      org_id: orgId,
      brand_id: brandId,
      client_id: clientId,
      client_secret_hash: clientSecret ? sha256(clientSecret) : null,
      name: `App ${clientId}`,
      type: confidential ? 'web' : 'spa',
      is_confidential: confidential,
      redirect_uris: redirectUris,
      allowed_grant_types: opts.grantTypes ?? ['authorization_code', 'refresh_token'],
      allowed_scopes: opts.scopes ?? ['openid', 'profile', 'email', 'offline_access'],
      enabled: true,
      first_party: opts.firstParty ?? false,
      description: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    .execute();
  return {
    orgId,
    brandId,
    brandSlug,
    brandName,
    appId,
    clientId,
    clientSecret,
    redirectUri: redirectUris[0],
  };
}
