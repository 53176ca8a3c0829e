import type { AppContext } from '../../context.js';
import type { Trx } from '../../db/schema.js';
import { diff, recordMutation } from '../../events/outbox.js';
import { mapDbError } from '../../http/db-conflicts.js';
import { notFound, validationFailed } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import {
  deletePolicy,
  findPolicy,
  findPolicyForUpdate,
  type GatePolicyRow,
  insertPolicy,
  listPolicies,
  setPolicyGates,
  updatePolicy,
} from './gate-policies.queries.js';
import type { CreatePolicyInput, GatePolicyView, UpdatePolicyInput } from './gate-policies.schemas.js';
import { type GateRule, ruleGateIds } from './policy-rule.js';
import { lockOrgGates } from './token-gates.queries.js';
import type { OrgRef } from './token-gates.service.js';

function toView(row: GatePolicyRow, orgSlug: string): GatePolicyView {
  return {
    id: row.id,
    org: orgSlug,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    rule: row.rule,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * Validates the rule and locks its gates: every one must be a gate of this org (another org's gate,
 * or one that does not exist, is a 400 naming `rule`). Returns the distinct gate ids.
 */
async function checkedGates(trx: Trx, orgId: string, rule: GateRule): Promise<string[]> {
  const ids = ruleGateIds(rule);
  const found = new Set(await lockOrgGates(trx, orgId, ids));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0)
    throw validationFailed([
      {
        field: 'rule',
        code: 'invalid_value',
        message: `not a token gate of this organization: ${missing.slice(0, 5).join(', ')}`,
      },
    ]);
  return ids;
}

export async function createPolicy(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  input: CreatePolicyInput,
): Promise<GatePolicyView> {
  const rule = input.rule as GateRule;
  const now = ctx.clock.now();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const gateIds = await checkedGates(trx, org.id, rule);
    const created = await insertPolicy(trx, {
      id: newId('gpol_'),
      org_id: org.id,
      name: input.name,
      description: input.description ?? null,
      rule: JSON.stringify(rule),
      created_at: now,
      updated_at: now,
    });
    await setPolicyGates(trx, created.id, gateIds).catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'gatePolicy.created',
      resourceType: 'gatePolicy',
      resourceId: created.id,
      metadata: { name: created.name },
      events: [
        { type: 'gatePolicy.created', data: { policyId: created.id, name: created.name, rule, gateIds } },
      ],
    });
    return created;
  });
  return toView(row, org.slug);
}

export async function listOrgPolicies(
  ctx: AppContext,
  org: OrgRef,
  page: { limit: number; offset: number },
): Promise<{ items: GatePolicyView[]; total: number }> {
  const { rows, total } = await listPolicies(ctx.db, org.id, page);
  return { items: rows.map((r) => toView(r, org.slug)), total };
}

export async function getPolicy(ctx: AppContext, org: OrgRef, policyId: string): Promise<GatePolicyView> {
  const row = await findPolicy(ctx.db, org.id, policyId);
  if (!row) throw notFound('gate policy');
  return toView(row, org.slug);
}

export async function patchPolicy(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  policyId: string,
  input: UpdatePolicyInput,
): Promise<GatePolicyView> {
  const row = await ctx.db.transaction().execute(async (trx) => {
    const before = await findPolicyForUpdate(trx, org.id, policyId);
    if (!before) throw notFound('gate policy');
    const rule = (input.rule as GateRule | undefined) ?? before.rule;
    const next = {
      name: input.name ?? before.name,
      description: input.description === undefined ? before.description : input.description,
      rule,
    };
    const changes = diff(
      { name: before.name, description: before.description, rule: JSON.stringify(before.rule) },
      { name: next.name, description: next.description, rule: JSON.stringify(rule) },
      ['name', 'description', 'rule'],
    );
    if (Object.keys(changes.after).length === 0) return before;
    if (input.rule !== undefined)
      await setPolicyGates(trx, policyId, await checkedGates(trx, org.id, rule)).catch(mapDbError);
    const after = await updatePolicy(trx, policyId, {
      ...next,
      rule: JSON.stringify(rule),
      updated_at: ctx.clock.now(),
    });
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'gatePolicy.updated',
      resourceType: 'gatePolicy',
      resourceId: policyId,
      metadata: { changed: Object.keys(changes.after) },
      events: [{ type: 'gatePolicy.updated', data: { policyId, changed: Object.keys(changes.after) } }],
    });
    return after;
  });
  return toView(row, org.slug);
}

export async function removePolicy(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  policyId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const deleted = await deletePolicy(trx, org.id, policyId).catch(mapDbError);
    if (!deleted) throw notFound('gate policy');
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'gatePolicy.deleted',
      resourceType: 'gatePolicy',
      resourceId: policyId,
      events: [{ type: 'gatePolicy.deleted', data: { policyId } }],
    });
  });
}
