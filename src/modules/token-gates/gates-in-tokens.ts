import type { AppContext } from '../../context.js';
import type { GatePolicyEvaluator } from '../../oidc/stores.js';
import { walletsOfUsers } from '../users/users.queries.js';
import { findPolicy, findPolicyRules } from './gate-policies.queries.js';
import { evaluateRule, type GateRule, ruleGateIds } from './policy-rule.js';
import { gateCheckerOf } from './token-gates.check.js';

/**
 * The engine's gate policy port (DESIGN §3 "Gates in tokens"): a policy passes for a user when any
 * one of their linked wallets passes its rule. Balances come from the public checks' checker — the
 * same cache (≤ 5 minutes), single-flight and batched RPC as the bulk check.
 */
export function gatePolicyEvaluator(ctx: AppContext): GatePolicyEvaluator {
  return {
    async evaluate(orgSlug, userId, policyIds) {
      const out = new Map(policyIds.map((id) => [id, false]));
      const [wallets, policies] = await Promise.all([
        walletsOfUsers(ctx.db, [userId]),
        findPolicyRules(ctx.db, orgSlug, policyIds),
      ]);
      const checker = gateCheckerOf(ctx);
      if (wallets.length === 0 || policies.length === 0) return out;
      if (!checker) throw new Error('the token-gate checker is not running');
      const rules = policies.map((p) => ({ id: p.id, rule: p.rule as GateRule }));
      const gateIds = [...new Set(rules.flatMap((p) => ruleGateIds(p.rule)))];
      const addresses = wallets.map((w) => w.address);
      const results = await checker.checkMany(orgSlug, gateIds, addresses);
      addresses.forEach((_, w) => {
        const passed = new Map(gateIds.map((g, i) => [g, results[w * gateIds.length + i].hasAccess]));
        for (const p of rules) if (evaluateRule(p.rule, passed)) out.set(p.id, true);
      });
      return out;
    },
    async describe(orgId, policyId, tx) {
      const row = await findPolicy(tx ?? ctx.db, orgId, policyId);
      return row ? { name: row.name, description: row.description } : null;
    },
  };
}
