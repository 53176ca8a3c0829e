import type { Insertable, Selectable } from 'kysely';
import type { Executor, TokenGateKind, TokenGatesTable, Trx } from '../../db/schema.js';

export type TokenGateRow = Selectable<TokenGatesTable>;

export function insertGate(db: Executor | Trx, row: Insertable<TokenGatesTable>): Promise<TokenGateRow> {
  return db.insertInto('token_gates').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findGate(
  db: Executor | Trx,
  orgId: string,
  gateId: string,
): Promise<TokenGateRow | undefined> {
  return db
    .selectFrom('token_gates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', gateId)
    .executeTakeFirst();
}

/** The gate, locked for the rest of the transaction (a PATCH reads `before` and writes `after`). */
export function findGateForUpdate(
  trx: Trx,
  orgId: string,
  gateId: string,
): Promise<TokenGateRow | undefined> {
  return trx
    .selectFrom('token_gates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', gateId)
    .forUpdate()
    .executeTakeFirst();
}

export async function listGates(
  db: Executor,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: TokenGateRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('token_gates')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom('token_gates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function updateGate(
  trx: Trx,
  gateId: string,
  values: Partial<Pick<TokenGateRow, 'name' | 'description' | 'min_holdings' | 'enabled' | 'updated_at'>>,
): Promise<TokenGateRow> {
  return trx
    .updateTable('token_gates')
    .set(values)
    .where('id', '=', gateId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function deleteGate(trx: Trx, orgId: string, gateId: string): Promise<{ id: string } | undefined> {
  return trx
    .deleteFrom('token_gates')
    .where('org_id', '=', orgId)
    .where('id', '=', gateId)
    .returning('id')
    .executeTakeFirst();
}

/** Turns off every enabled gate of an org (org deletion). Returns the ids it turned off. */
export async function disableGatesOfOrg(trx: Trx, orgId: string, now: Date): Promise<string[]> {
  const rows = await trx
    .updateTable('token_gates')
    .set({ enabled: false, updated_at: now })
    .where('org_id', '=', orgId)
    .where('enabled', '=', true)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** What the public check needs of a gate, found by id under an active org's slug. */
export interface GateForCheck {
  id: string;
  orgId: string;
  enabled: boolean;
  kind: TokenGateKind;
  mintAddress: string;
  minHoldings: string;
}

export async function findGateForCheck(
  db: Executor,
  orgSlug: string,
  gateId: string,
): Promise<GateForCheck | undefined> {
  // By primary keys only, then the slug compared here: orgs.slug has no index of its own.
  const row = await db
    .selectFrom('token_gates as g')
    .innerJoin('orgs as o', 'o.id', 'g.org_id')
    .select([
      'g.id',
      'g.org_id',
      'g.enabled',
      'g.kind',
      'g.mint_address',
      'g.min_holdings',
      'o.slug',
      'o.deleted_at',
    ])
    .where('g.id', '=', gateId)
    .executeTakeFirst();
  if (!row || row.slug !== orgSlug || row.deleted_at !== null) return undefined;
  return {
    id: row.id,
    orgId: row.org_id,
    enabled: row.enabled,
    kind: row.kind,
    mintAddress: row.mint_address,
    minHoldings: row.min_holdings,
  };
}
