import type { Insertable, Updateable } from 'kysely';
import type { AppRow, AppsTable, Executor } from '../../db/schema.js';

/** An app with what the issuer needs to know about its parents. */
export interface AppWithBrand extends AppRow {
  brand_slug: string;
  brand_name: string;
  brand_deleted_at: Date | null;
  org_slug: string;
  org_deleted_at: Date | null;
}

/**
 * The app with `clientId`, joined with its brand and org, whatever its state: the caller decides
 * (see `isAppActive`). For the issuer's client authentication and token checks.
 */
export function findAppByClientId(db: Executor, clientId: string): Promise<AppWithBrand | undefined> {
  return db
    .selectFrom('apps')
    .innerJoin('brands', 'brands.id', 'apps.brand_id')
    .innerJoin('orgs', 'orgs.id', 'apps.org_id')
    .selectAll('apps')
    .select([
      'brands.slug as brand_slug',
      'brands.name as brand_name',
      'brands.deleted_at as brand_deleted_at',
      'orgs.slug as org_slug',
      'orgs.deleted_at as org_deleted_at',
    ])
    .where('apps.client_id', '=', clientId)
    .executeTakeFirst();
}

/** Whether tokens for this app may be issued or accepted: enabled, not deleted, nor its brand or org. */
export function isAppActive(app: AppWithBrand): boolean {
  return app.enabled && !app.deleted_at && !app.brand_deleted_at && !app.org_deleted_at;
}

/** A live app of one brand (another brand's app is invisible). */
export function findAppInBrand(
  db: Executor,
  brandId: string,
  clientId: string,
  lock = false,
): Promise<AppRow | undefined> {
  const q = db
    .selectFrom('apps')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

export async function listApps(
  db: Executor,
  brandId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: AppRow[]; total: number }> {
  const base = db.selectFrom('apps').where('brand_id', '=', brandId).where('deleted_at', 'is', null);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function insertApp(db: Executor, row: Insertable<AppsTable>): Promise<AppRow> {
  return db.insertInto('apps').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateApp(db: Executor, id: string, patch: Updateable<AppsTable>): Promise<AppRow> {
  return db.updateTable('apps').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export function softDeleteApp(db: Executor, id: string, now: Date): Promise<AppRow> {
  // A deleted app lets go of its required gate policy, which can then be deleted.
  return updateApp(db, id, {
    enabled: false,
    deleted_at: now,
    updated_at: now,
    required_gate_policy_id: null,
  });
}

/**
 * The issuer's view of a client (src/stores/clients.store.ts): the enabled app with this client id
 * of a live brand of a live org, or null.
 */
export async function findLiveClient(db: Executor, clientId: string) {
  const row = await db
    .selectFrom('apps')
    .innerJoin('brands', 'brands.id', 'apps.brand_id')
    .innerJoin('orgs', 'orgs.id', 'apps.org_id')
    .select([
      'apps.id as appId',
      'apps.client_id as clientId',
      'apps.org_id as orgId',
      'orgs.slug as orgSlug',
      'apps.brand_id as brandId',
      'brands.slug as brandSlug',
      'brands.name as brandName',
      'apps.name as name',
      'apps.type as type',
      'apps.is_confidential as isConfidential',
      'apps.first_party as firstParty',
      'apps.redirect_uris as redirectUris',
      'apps.post_logout_redirect_uris as postLogoutRedirectUris',
      'apps.backchannel_logout_uri as backchannelLogoutUri',
      'apps.allowed_grant_types as allowedGrantTypes',
      'apps.allowed_scopes as allowedScopes',
      'apps.client_secret_hash as secretHash',
      'apps.required_gate_policy_id as requiredGatePolicyId',
    ])
    .where('apps.client_id', '=', clientId)
    .where('apps.enabled', '=', true)
    .where('apps.deleted_at', 'is', null)
    .where('brands.deleted_at', 'is', null)
    .where('orgs.deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Inserts the app, or when its client id exists, only resets its redirect and post-logout redirect
 * URIs (start-up bootstrap).
 */
export async function upsertAppRedirectUris(db: Executor, row: Insertable<AppsTable>): Promise<void> {
  await db
    .insertInto('apps')
    .values(row)
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({
        redirect_uris: row.redirect_uris,
        post_logout_redirect_uris: row.post_logout_redirect_uris ?? [],
      }),
    )
    .execute();
}

// ---------------------------------------------------------------- cascades (apps.cascade.ts) and scope use

/** Soft-deletes and disables a deleted brand's live apps; returns their client ids. */
export async function disableAppsOfBrand(db: Executor, brandId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable('apps')
    .set({ enabled: false, deleted_at: now, updated_at: now })
    .where('brand_id', '=', brandId)
    .where('deleted_at', 'is', null)
    .returning(['client_id'])
    .execute();
  return rows.map((r) => r.client_id);
}

/** Disables a deleted org's enabled apps; returns their client ids. */
export async function disableAppsOfOrg(db: Executor, orgId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable('apps')
    .set({ enabled: false, updated_at: now })
    .where('org_id', '=', orgId)
    .where('enabled', '=', true)
    .returning('client_id')
    .execute();
  return rows.map((r) => r.client_id);
}

/** Client ids of the brand's apps that are not deleted. */
export async function clientIdsOfBrand(db: Executor, brandId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('apps')
    .select('client_id')
    .where('brand_id', '=', brandId)
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.client_id);
}

/** Client ids of the brand's live apps whose `allowedScopes` list `name`. */
export async function appsUsingScope(db: Executor, brandId: string, name: string): Promise<string[]> {
  const rows = await db
    .selectFrom('apps')
    .select('client_id')
    .where('brand_id', '=', brandId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb(eb.val(name), '=', eb.fn.any('allowed_scopes')))
    .orderBy('client_id')
    .execute();
  return rows.map((r) => r.client_id);
}
