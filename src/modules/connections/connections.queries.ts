import { sql, type Selectable } from 'kysely';
import type { ConnectionsTable, Executor } from '../../db/schema.js';

export type ConnectionRow = Selectable<ConnectionsTable>;
/** A connection without its sealed config: what every listing works with. */
export type ConnectionMeta = Omit<ConnectionRow, 'config_enc'>;

const META = ['id', 'org_id', 'brand_id', 'type', 'enabled', 'created_at', 'updated_at'] as const;

export function listConnections(db: Executor, brandId: string): Promise<ConnectionMeta[]> {
  return db.selectFrom('connections').select(META).where('brand_id', '=', brandId).orderBy('type').execute();
}

export function findConnection(
  db: Executor,
  brandId: string,
  type: string,
  lock = false,
): Promise<ConnectionMeta | undefined> {
  const q = db
    .selectFrom('connections')
    .select(META)
    .where('brand_id', '=', brandId)
    .where('type', '=', type);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

/** Inserts or replaces the brand's connection of `type`; `created` says which happened. */
export async function upsertConnection(
  db: Executor,
  row: { id: string; org_id: string; brand_id: string; type: string; enabled: boolean; config_enc: string },
  now: Date,
): Promise<ConnectionMeta & { created: boolean }> {
  const out = await db
    .insertInto('connections')
    .values({ ...row, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.constraint('connections_brand_type_key').doUpdateSet((eb) => ({
        enabled: eb.ref('excluded.enabled'),
        config_enc: eb.ref('excluded.config_enc'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returning([...META, sql<boolean>`(xmax = 0)`.as('created')])
    .executeTakeFirstOrThrow();
  return out;
}

export function setConnectionEnabled(
  db: Executor,
  id: string,
  enabled: boolean,
  now: Date,
): Promise<ConnectionMeta> {
  return db
    .updateTable('connections')
    .set({ enabled, updated_at: now })
    .where('id', '=', id)
    .returning(META)
    .executeTakeFirstOrThrow();
}

export function deleteConnection(db: Executor, id: string): Promise<unknown> {
  return db.deleteFrom('connections').where('id', '=', id).execute();
}

/** The sealed config of a live brand's connection (for sign-in), with its state. */
export function findSealedConnection(db: Executor, brandId: string, type: string) {
  return db
    .selectFrom('connections')
    .innerJoin('brands', 'brands.id', 'connections.brand_id')
    .select(['connections.enabled', 'connections.config_enc'])
    .where('connections.brand_id', '=', brandId)
    .where('connections.type', '=', type)
    .where('brands.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Each connection type of the brand with its switch (type → enabled). */
export async function connectionSwitches(db: Executor, brandId: string): Promise<Map<string, boolean>> {
  const rows = await db
    .selectFrom('connections')
    .select(['type', 'enabled'])
    .where('brand_id', '=', brandId)
    .execute();
  return new Map(rows.map((c) => [c.type, c.enabled]));
}

// ---------------------------------------------------------------- cascades (connections.cascade.ts)

/** Disables a deleted brand's enabled connections; returns their types. */
export async function disableConnectionsOfBrand(db: Executor, brandId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable('connections')
    .set({ enabled: false, updated_at: now })
    .where('brand_id', '=', brandId)
    .where('enabled', '=', true)
    .returning(['type'])
    .execute();
  return rows.map((r) => r.type);
}

/** Disables a deleted org's enabled connections. */
export async function disableConnectionsOfOrg(db: Executor, orgId: string, now: Date): Promise<void> {
  await db
    .updateTable('connections')
    .set({ enabled: false, updated_at: now })
    .where('org_id', '=', orgId)
    .where('enabled', '=', true)
    .execute();
}
