import type { Selectable } from 'kysely';
import type { BrandScopesTable, Executor } from '../../db/schema.js';

export type BrandScopeRow = Selectable<BrandScopesTable>;

export function listScopes(db: Executor, brandId: string): Promise<BrandScopeRow[]> {
  return db.selectFrom('brand_scopes').selectAll().where('brand_id', '=', brandId).orderBy('name').execute();
}

export async function scopeNames(db: Executor, brandId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('brand_scopes').select('name').where('brand_id', '=', brandId).execute();
  return new Set(rows.map((r) => r.name));
}

export function findScope(db: Executor, brandId: string, name: string): Promise<BrandScopeRow | undefined> {
  return db
    .selectFrom('brand_scopes')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function insertScope(
  db: Executor,
  row: Omit<BrandScopeRow, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date },
): Promise<BrandScopeRow> {
  return db.insertInto('brand_scopes').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateScopeDescription(
  db: Executor,
  brandId: string,
  name: string,
  description: string,
  now: Date,
): Promise<BrandScopeRow | undefined> {
  return db
    .updateTable('brand_scopes')
    .set({ description, updated_at: now })
    .where('brand_id', '=', brandId)
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirst();
}

export function deleteScope(
  db: Executor,
  brandId: string,
  name: string,
): Promise<{ id: string } | undefined> {
  return db
    .deleteFrom('brand_scopes')
    .where('brand_id', '=', brandId)
    .where('name', '=', name)
    .returning('id')
    .executeTakeFirst();
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

/** The brand's own scope vocabulary, name → description (the consent screen's words). */
export async function scopeDescriptions(db: Executor, brandId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('brand_scopes')
    .select(['name', 'description'])
    .where('brand_id', '=', brandId)
    .execute();
  return new Map(rows.map((x) => [x.name, x.description]));
}
