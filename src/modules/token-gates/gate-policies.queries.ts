import type { Insertable, Selectable } from 'kysely';
import type { Executor, GatePoliciesTable, Trx } from '../../db/schema.js';

export type GatePolicyRow = Selectable<GatePoliciesTable>;

export function insertPolicy(trx: Trx, row: Insertable<GatePoliciesTable>): Promise<GatePolicyRow> {
  return trx.insertInto('gate_policies').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findPolicy(
  db: Executor,
  orgId: string,
  policyId: string,
): Promise<GatePolicyRow | undefined> {
  return db
    .selectFrom('gate_policies')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', policyId)
    .executeTakeFirst();
}

/** The policy, locked for the rest of the transaction. */
export function findPolicyForUpdate(
  trx: Trx,
  orgId: string,
  policyId: string,
): Promise<GatePolicyRow | undefined> {
  return trx
    .selectFrom('gate_policies')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', policyId)
    .forUpdate()
    .executeTakeFirst();
}

export async function listPolicies(
  db: Executor,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: GatePolicyRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('gate_policies')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom('gate_policies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function updatePolicy(
  trx: Trx,
  policyId: string,
  values: Partial<Pick<Insertable<GatePoliciesTable>, 'name' | 'description' | 'rule' | 'updated_at'>>,
): Promise<GatePolicyRow> {
  return trx
    .updateTable('gate_policies')
    .set(values)
    .where('id', '=', policyId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function deletePolicy(trx: Trx, orgId: string, policyId: string): Promise<{ id: string } | undefined> {
  return trx
    .deleteFrom('gate_policies')
    .where('org_id', '=', orgId)
    .where('id', '=', policyId)
    .returning('id')
    .executeTakeFirst();
}

/** Replaces the gates a policy's rule names (gate_policy_gates: what keeps them from deletion). */
export async function setPolicyGates(trx: Trx, policyId: string, gateIds: string[]): Promise<void> {
  await trx.deleteFrom('gate_policy_gates').where('policy_id', '=', policyId).execute();
  if (gateIds.length > 0)
    await trx
      .insertInto('gate_policy_gates')
      .values(gateIds.map((gate_id) => ({ policy_id: policyId, gate_id })))
      .execute();
}

/** What the public policy check needs: the rule, found by id under an active org's slug. */
export async function findPolicyForCheck(
  db: Executor,
  orgSlug: string,
  policyId: string,
): Promise<{ id: string; orgId: string; rule: GatePolicyRow['rule'] } | undefined> {
  const row = await db
    .selectFrom('gate_policies as p')
    .innerJoin('orgs as o', 'o.id', 'p.org_id')
    .select(['p.id', 'p.org_id', 'p.rule', 'o.slug', 'o.deleted_at'])
    .where('p.id', '=', policyId)
    .executeTakeFirst();
  if (!row || row.slug !== orgSlug || row.deleted_at !== null) return undefined;
  return { id: row.id, orgId: row.org_id, rule: row.rule };
}

/** The rules of these policies of the live org `orgSlug` (the token path's evaluation; others absent). */
export function findPolicyRules(
  db: Executor,
  orgSlug: string,
  policyIds: string[],
): Promise<Array<{ id: string; rule: GatePolicyRow['rule'] }>> {
  return db
    .selectFrom('gate_policies as p')
    .innerJoin('orgs as o', 'o.id', 'p.org_id')
    .select(['p.id', 'p.rule'])
    .where('p.id', 'in', policyIds)
    .where('o.slug', '=', orgSlug)
    .where('o.deleted_at', 'is', null)
    .execute();
}
