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

export function updateScope(
  db: Executor,
  brandId: string,
  name: string,
  set: { description: string; gate_policy_id: string | null; updated_at: Date },
): Promise<BrandScopeRow | undefined> {
  return db
    .updateTable('brand_scopes')
    .set(set)
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

/** The brand's gated scopes: scope name → gate policy id (DESIGN §3 "Gates in tokens"). */
export async function scopePolicies(db: Executor, brandId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('brand_scopes')
    .select(['name', 'gate_policy_id'])
    .where('brand_id', '=', brandId)
    .where('gate_policy_id', 'is not', null)
    .execute();
  return new Map(rows.map((x) => [x.name, x.gate_policy_id as string]));
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
