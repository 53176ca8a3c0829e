import type { Insertable, Updateable } from 'kysely';
import type { BrandRow, BrandsTable, Executor } from '../../db/schema.js';

/** A live (not soft-deleted) brand of an org, by slug. */
export function findBrandBySlug(db: Executor, orgId: string, slug: string): Promise<BrandRow | undefined> {
  return db
    .selectFrom('brands')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * The same, locking the row until the transaction ends: `share` for writes that depend on the
 * brand staying alive (creating an app, validating scopes), `update` for writes that change what
 * those depend on (deleting the brand or a scope).
 */
export function lockBrandBySlug(
  db: Executor,
  orgId: string,
  slug: string,
  mode: 'share' | 'update',
): Promise<BrandRow | undefined> {
  const q = db
    .selectFrom('brands')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null);
  return (mode === 'share' ? q.forShare() : q.forUpdate()).executeTakeFirst();
}

export async function listBrands(
  db: Executor,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: BrandRow[]; total: number }> {
  const base = db.selectFrom('brands').where('org_id', '=', orgId).where('deleted_at', 'is', null);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function insertBrand(db: Executor, row: Insertable<BrandsTable>): Promise<BrandRow> {
  return db.insertInto('brands').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateBrand(db: Executor, id: string, patch: Updateable<BrandsTable>): Promise<BrandRow> {
  return db.updateTable('brands').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Soft-deletes a brand (what hangs off it is disabled by its modules' handlers, brands.service.ts). */
export async function softDeleteBrand(db: Executor, id: string, now: Date): Promise<void> {
  await db.updateTable('brands').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
}

/** Soft-deletes a deleted org's live brands. */
export async function softDeleteBrandsOfOrg(db: Executor, orgId: string, now: Date): Promise<void> {
  await db
    .updateTable('brands')
    .set({ deleted_at: now, updated_at: now })
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .execute();
}

/** Whether a brand with this id exists and is not soft-deleted. */
export async function liveBrandExists(db: Executor, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('brands')
    .select('id')
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row;
}

/** Inserts the brand unless its id or slug exists (start-up bootstrap). */
export async function insertBrandIfAbsent(db: Executor, row: Insertable<BrandsTable>): Promise<void> {
  await db
    .insertInto('brands')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Sign-in's reads (src/stores/signin-brands.store.ts and provider-states.store.ts call these)

/** A live brand as the interaction view shows it. */
export async function brandPresentation(db: Executor, id: string) {
  const row = await db
    .selectFrom('brands')
    .select([
      'id',
      'org_id as orgId',
      'slug',
      'name',
      'logo_file_id as logoFileId',
      'primary_color as primaryColor',
      'privacy_policy_url as privacyPolicyUrl',
      'terms_url as termsUrl',
      'provider_order as providerOrder',
    ])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** A live brand as the hosted pages show it (header, colour, footer). */
export async function brandPageFields(db: Executor, id: string) {
  const row = await db
    .selectFrom('brands')
    .select(['name', 'logo_file_id', 'primary_color', 'support_email', 'privacy_policy_url', 'terms_url'])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** A live brand's id and callback id (the path segment of its provider returns). */
export async function brandCallbackId(db: Executor, id: string) {
  const row = await db
    .selectFrom('brands')
    .select(['id', 'oauth_callback_id as oauthCallbackId'])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** The brand a provider return's callback id names (`live`: not soft-deleted). */
export async function brandIdByCallbackId(
  db: Executor,
  oauthCallbackId: string,
  opts: { live: boolean },
): Promise<string | null> {
  let q = db.selectFrom('brands').select('id').where('oauth_callback_id', '=', oauthCallbackId);
  if (opts.live) q = q.where('deleted_at', 'is', null);
  return (await q.executeTakeFirst())?.id ?? null;
}
