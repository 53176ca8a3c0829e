import { createHash, randomBytes } from 'node:crypto';
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

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A random client IP, so tests do not share the per-IP rate-limit buckets. */
export function randomIp(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

/** The standard authorize query for `client`, with overrides (null removes a parameter). */
export function authorizeQuery(
  client: SeededClient,
  overrides: Record<string, string | null> = {},
  challenge = pkce().challenge,
): string {
  const base: Record<string, string | null> = {
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope: 'openid profile',
    state: `st-${randomAlphanumeric(8)}`,
    nonce: `n-${randomAlphanumeric(8)}`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(base)) if (v !== null) q.append(k, v);
  return q.toString();
}

/** Cookies set by a response, as a Cookie header value (merged into `jar`). */
export function collectCookies(
  res: { cookies: Array<{ name: string; value: string }> },
  jar: Record<string, string> = {},
): Record<string, string> {
  for (const c of res.cookies) jar[c.name] = c.value;
  return jar;
}

export function cookieHeader(jar: Record<string, string>): string {
  return Object.entries(jar)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
}

/**
 * Signs `wallet` in through the headless API of interaction `id`: challenge, sign, verify.
 * Returns the verify response and the cookie jar it filled.
 */
export async function walletSignIn(
  t: TestApp,
  id: string,
  wallet: {
    address: string;
    prove(message: string): { address: string; signature: string; signedMessage: string };
  },
  jar: Record<string, string> = {},
) {
  const ch = await t.app.inject({
    method: 'POST',
    url: `/interactions/${id}/wallet/challenge`,
    payload: { address: wallet.address },
    headers: { cookie: cookieHeader(jar) },
  });
  if (ch.statusCode !== 200) throw new Error(`challenge failed: ${ch.statusCode} ${ch.body}`);
  const verify = await t.app.inject({
    method: 'POST',
    url: `/interactions/${id}/wallet/verify`,
    payload: wallet.prove(ch.json().message),
    headers: { cookie: cookieHeader(jar) },
  });
  collectCookies(verify, jar);
  return { res: verify, jar };
}

/**
 * A gate (`minHoldings` of `mint`, 100 by default), a policy of it ("Sun holders") and `client`
 * requiring that policy (DESIGN §3 "Gates in tokens"). A disabled gate passes no wallet without
 * asking the RPC; an enabled one reads the chain. Returns the policy id.
 */
export async function requireGatePolicy(
  t: TestApp,
  client: SeededClient,
  gate: { mint: string; enabled: boolean; minHoldings?: string },
): Promise<string> {
  const now = t.clock.now();
  const gateId = newId('gate_');
  const policyId = newId('gpol_');
  await t.ctx.db
    .insertInto('token_gates')
    .values({
      id: gateId,
      org_id: client.orgId,
      name: 'Sun token',
      description: null,
      mint_address: gate.mint,
      min_holdings: gate.minHoldings ?? '100',
      enabled: gate.enabled,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await t.ctx.db
    .insertInto('gate_policies')
    .values({
      id: policyId,
      org_id: client.orgId,
      name: 'Sun holders',
      description: 'Hold the Sun token in a wallet linked to your account.',
      rule: JSON.stringify({ gate: gateId }),
      created_at: now,
      updated_at: now,
    })
    .execute();
  await t.ctx.db.insertInto('gate_policy_gates').values({ policy_id: policyId, gate_id: gateId }).execute();
  await t.ctx.db
    .updateTable('apps')
    .set({ required_gate_policy_id: policyId })
    .where('id', '=', client.appId)
    .execute();
  return policyId;
}
