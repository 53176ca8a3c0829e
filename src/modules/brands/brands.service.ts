import type { Static } from 'typebox';
import { CONSOLE_BRAND_ID, CONSOLE_BRAND_SLUG, SYSTEM_ORG_ID } from '../../config/system.js';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { BrandRow, BrandsTable, Executor, OrgRow, Trx } from '../../db/schema.js';
import { conflict, type FieldError, notFound, unprocessable, validationFailed } from '../../http/errors.js';
import { type Mutation, recordMutation } from '../../events/outbox.js';
import { newId, randomAlphanumeric } from '../../lib/ids.js';
import { type FileTracker, fileTrackers, resolveFileId } from '../files/files.service.js';
import type { DeletionScope, OrgDeletedHandler } from '../orgs/orgs.service.js';
import * as q from './brands.queries.js';
import {
  type Brand,
  type BrandCreateBody,
  type BrandPatchBody,
  DEFAULT_PROVIDER_ORDER,
} from './brands.schemas.js';
import type { Updateable } from 'kysely';

type BrandOut = Static<typeof Brand>;

/** Random, unguessable and immutable: it is the path of every provider callback of the brand. */
const CALLBACK_ID_LENGTH = 24;

export function presentBrand(row: BrandRow, logo?: FileTracker): BrandOut {
  const out: BrandOut = {
    id: row.id,
    org: row.org_id,
    slug: row.slug,
    name: row.name,
    oauthCallbackId: row.oauth_callback_id,
    providerOrder: row.provider_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (logo) out.logoFile = logo;
  if (row.primary_color !== null) out.primaryColor = row.primary_color;
  if (row.support_email !== null) out.supportEmail = row.support_email;
  if (row.privacy_policy_url !== null) out.privacyPolicyUrl = row.privacy_policy_url;
  if (row.terms_url !== null) out.termsUrl = row.terms_url;
  return out;
}

/** An HTTPS URL with a host and no credentials; the schema only checked its prefix. */
export function httpsUrlError(value: string, field: string): FieldError | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return { field, code: 'invalid_format', message: 'must be a valid URL' };
  }
  if (u.protocol !== 'https:' || !u.hostname)
    return { field, code: 'invalid_format', message: 'must be an HTTPS URL' };
  if (u.username || u.password)
    return { field, code: 'invalid_format', message: 'must not carry credentials' };
  return null;
}

function checkUrls(body: { privacyPolicyUrl?: string | null; termsUrl?: string | null }) {
  const errors: FieldError[] = [];
  for (const field of ['privacyPolicyUrl', 'termsUrl'] as const) {
    const v = body[field];
    if (typeof v === 'string') {
      const e = httpsUrlError(v, field);
      if (e) errors.push(e);
    }
  }
  if (errors.length) throw validationFailed(errors);
}

async function logoOf(ctx: AppContext, db: Executor, row: BrandRow): Promise<FileTracker | undefined> {
  if (!row.logo_file_id) return undefined;
  return (await fileTrackers(db, ctx.config, [row.logo_file_id])).get(row.logo_file_id);
}

/** The live brand `slug` of the org, or 404 (another org's brand is invisible). */
export async function requireBrand(db: Executor, org: OrgRow, slug: string): Promise<BrandRow> {
  const brand = await q.findBrandBySlug(db, org.id, slug);
  if (!brand) throw notFound('brand');
  return brand;
}

/**
 * The same, locked until the transaction ends: `share` for writes that need the brand to stay alive
 * (apps, scopes, connections), `update` for writes that change what those depend on.
 */
export async function lockBrand(
  trx: Executor,
  org: OrgRow,
  slug: string,
  mode: 'share' | 'update',
): Promise<BrandRow> {
  const brand = await q.lockBrandBySlug(trx, org.id, slug, mode);
  if (!brand) throw notFound('brand');
  return brand;
}

export async function createBrand(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  body: Static<typeof BrandCreateBody>,
): Promise<BrandOut> {
  // The REST API trusts access tokens whose audience is `console`: no other org may mint them.
  if (body.slug === CONSOLE_BRAND_SLUG && org.id !== SYSTEM_ORG_ID)
    throw conflict('the brand slug "console" is reserved', { field: 'slug' });
  checkUrls(body);
  return ctx.db.transaction().execute(async (trx) => {
    const logo = body.logoFile
      ? await resolveFileId(trx, ctx.config, body.logoFile, 'logoFile', { uploadedBy: actorUserId })
      : undefined;
    const now = ctx.clock.now();
    const row = await q
      .insertBrand(trx, {
        id: newId('brand_'),
        org_id: org.id,
        slug: body.slug,
        name: body.name,
        oauth_callback_id: randomAlphanumeric(CALLBACK_ID_LENGTH),
        logo_file_id: logo?.id ?? null,
        primary_color: body.primaryColor ?? null,
        support_email: body.supportEmail ?? null,
        privacy_policy_url: body.privacyPolicyUrl ?? null,
        terms_url: body.termsUrl ?? null,
        provider_order: body.providerOrder ?? [...DEFAULT_PROVIDER_ORDER],
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.created',
      resourceType: 'brand',
      resourceId: row.id,
      metadata: { slug: row.slug, name: row.name },
    });
    return presentBrand(row, logo);
  });
}

export async function listBrands(ctx: AppContext, org: OrgRow, page: { limit: number; offset: number }) {
  const { rows, total } = await q.listBrands(ctx.db, org.id, page);
  const logos = await fileTrackers(
    ctx.db,
    ctx.config,
    rows.map((r) => r.logo_file_id),
  );
  return {
    items: rows.map((r) => presentBrand(r, r.logo_file_id ? logos.get(r.logo_file_id) : undefined)),
    total,
  };
}

export async function getBrand(ctx: AppContext, org: OrgRow, slug: string): Promise<BrandOut> {
  const row = await requireBrand(ctx.db, org, slug);
  return presentBrand(row, await logoOf(ctx, ctx.db, row));
}

const COLUMN_OF = {
  name: 'name',
  primaryColor: 'primary_color',
  supportEmail: 'support_email',
  privacyPolicyUrl: 'privacy_policy_url',
  termsUrl: 'terms_url',
  providerOrder: 'provider_order',
} as const;

export async function updateBrand(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  slug: string,
  body: Static<typeof BrandPatchBody>,
): Promise<BrandOut> {
  checkUrls(body);
  return ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, slug, 'update');
    const patch: Updateable<BrandsTable> = {};
    const changed: string[] = [];
    for (const [field, column] of Object.entries(COLUMN_OF) as Array<
      [keyof typeof COLUMN_OF, (typeof COLUMN_OF)[keyof typeof COLUMN_OF]]
    >) {
      const v = body[field];
      if (v === undefined) continue;
      if (JSON.stringify(v) !== JSON.stringify(brand[column])) changed.push(field);
      (patch as Record<string, unknown>)[column] = v;
    }
    let logo: FileTracker | undefined;
    if (body.logoFile !== undefined) {
      logo =
        body.logoFile === null
          ? undefined
          : await resolveFileId(trx, ctx.config, body.logoFile, 'logoFile', {
              uploadedBy: actorUserId,
              current: brand.logo_file_id,
            });
      patch.logo_file_id = logo?.id ?? null;
      if (patch.logo_file_id !== brand.logo_file_id) changed.push('logoFile');
    } else {
      logo = await logoOf(ctx, trx, brand);
    }
    if (changed.length === 0) return presentBrand(brand, logo);
    patch.updated_at = ctx.clock.now();
    const row = await q.updateBrand(trx, brand.id, patch);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.updated',
      resourceType: 'brand',
      resourceId: brand.id,
      metadata: { slug: brand.slug, changed },
    });
    return presentBrand(row, logo);
  });
}

/** A module's share of a brand's deletion: added to the `brand.deleted` audit entry and its events. */
export interface BrandDeletedPart {
  metadata: Record<string, unknown>;
  events: NonNullable<Mutation['events']>;
}

/**
 * Disables a module's resources of a brand being deleted, inside the deletion's transaction (apps,
 * connections: `ctx.hooks.brandDeleted`, built by wiring.ts). Must not call out over the network.
 */
export type BrandDeletedHandler = (
  trx: Trx,
  brand: { id: string; slug: string },
  deletion: DeletionScope,
) => Promise<BrandDeletedPart>;

/**
 * Soft-deletes the brand: its apps are disabled (and their tokens stop validating at the issuer)
 * and its connections are disabled, by their modules' handlers. The slug stays taken in the org, so
 * a new brand can never receive tokens minted for the old one's audience.
 */
export async function deleteBrand(ctx: AppContext, org: OrgRow, actorUserId: string, slug: string) {
  const handlers = ctx.hooks.brandDeleted;
  if (!handlers) throw new Error('ctx.hooks.brandDeleted is not wired');
  const afterCommit: Array<() => void> = [];
  await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, slug, 'update');
    // Deleting it would disable the console app and with it every console token.
    if (brand.id === CONSOLE_BRAND_ID) throw unprocessable('the console brand cannot be deleted');
    const now = ctx.clock.now();
    await q.softDeleteBrand(trx, brand.id, now);
    const deletion: DeletionScope = { ctx, now, afterCommit: (fn) => afterCommit.push(fn) };
    const parts: BrandDeletedPart[] = [];
    for (const handler of handlers) parts.push(await handler(trx, brand, deletion));
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.deleted',
      resourceType: 'brand',
      resourceId: brand.id,
      metadata: Object.assign({ slug: brand.slug }, ...parts.map((p) => p.metadata)),
      events: parts.flatMap((p) => p.events),
    });
  });
  for (const fn of afterCommit) fn();
}

/** An org's deletion soft-deletes its brands (wired with `onOrgDeleted` in wiring.ts). */
export const deleteBrandsOfOrg: OrgDeletedHandler = async (trx, orgId, _clock, deletion) => {
  await q.softDeleteBrandsOfOrg(trx, orgId, deletion.now);
};
