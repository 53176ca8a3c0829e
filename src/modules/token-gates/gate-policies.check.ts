import type { AppContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { findPolicyForCheck } from './gate-policies.queries.js';
import type { PolicyCheckResult } from './gate-policies.schemas.js';
import { evaluateRule, ruleGateIds } from './policy-rule.js';
import type { CheckAnswer, GateChecker } from './token-gates.check.js';
import type { CheckResult } from './token-gates.schemas.js';

const POLICY_ID = /^gpol_[A-Za-z0-9]{1,64}$/;

/** The policy's rule and its distinct gates, or a 404 (unknown id, another org, deleted org). */
export async function policyForCheck(ctx: AppContext, orgSlug: string, policyId: string) {
  const policy = POLICY_ID.test(policyId) ? await findPolicyForCheck(ctx.db, orgSlug, policyId) : undefined;
  if (!policy) throw notFound('gate policy');
  return { ...policy, gateIds: ruleGateIds(policy.rule) };
}

/** One gate's answer through the single check: its cache, its single-flight, its errors. */
export function checkGate(
  checker: GateChecker,
  orgSlug: string,
  gateId: string,
  wallet: string,
  refresh: boolean,
): CheckAnswer | Promise<CheckAnswer> {
  return (
    (refresh ? undefined : checker.cached(orgSlug, gateId, wallet)) ??
    checker.check(orgSlug, gateId, wallet, refresh)
  );
}

/**
 * The public policy check: every distinct gate of the rule evaluated (none skipped by
 * short-circuit, so the answer shows each one), then the rule over their answers.
 */
export async function checkPolicy(
  ctx: AppContext,
  checker: GateChecker,
  orgSlug: string,
  policyId: string,
  wallet: string,
  refresh: boolean,
  /** Spends the checks' budget once the policy's distinct gates are known (before any is read). */
  charge: (gates: number) => void | Promise<void> = () => {},
): Promise<PolicyCheckResult> {
  const policy = await policyForCheck(ctx, orgSlug, policyId);
  await charge(policy.gateIds.length);
  const answers = await Promise.all(
    policy.gateIds.map((id) => checkGate(checker, orgSlug, id, wallet, refresh)),
  );
  const passed = new Map(policy.gateIds.map((id, i) => [id, (answers[i] as CheckAnswer).result.hasAccess]));
  return {
    hasAccess: evaluateRule(policy.rule, passed),
    gates: policy.gateIds.map((gateId, i) => ({
      gateId,
      ...((answers[i] as CheckAnswer).result as CheckResult),
    })),
  };
}
