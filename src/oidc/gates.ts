import type { AppContext } from '../context.js';
import { OAuthError, validationFailed } from '../http/errors.js';
import type { Client } from './clients.js';
import { STANDARD_SCOPES } from './discovery.js';
import type { GatePolicyEvaluator, Tx } from './stores.js';

/** The scope that puts the passed policies in the tokens (`gates` claim). */
export const GATES_SCOPE = 'gates';

/** DESIGN §3: the error description of a sign-in refused by the app's required gate policy. */
export const UNMET_REQUIREMENT = "wallet does not meet the app's access requirements";

const STANDARD = new Set<string>(STANDARD_SCOPES);

/** Until src/wiring.ts connects the token-gates module: every policy fails (closed, never open). */
export const unwiredGatePolicies: GatePolicyEvaluator = {
  async evaluate(_org, _user, policyIds) {
    return new Map(policyIds.map((id) => [id, false]));
  },
  async describe() {
    return null;
  },
};

/** What the gates decide for one issuance of a user's tokens. */
export interface GateDecision {
  /** The scopes the tokens carry: the grant's, less the gated ones whose policy failed. */
  scopes: string[];
  /** Gated scopes of the grant withheld from these tokens because their policy did not pass. */
  dropped: string[];
  /** Whether the app's required policy passed (true when it has none). */
  requirementMet: boolean;
  /** The `gates` claim: the required policy and the policies of the granted gated scopes. */
  passedPolicies: string[];
}

/** The policies' answers for the user, any failure to read the chain a retryable OAuth error. */
async function evaluate(
  ctx: AppContext,
  client: Client,
  userId: string,
  policyIds: string[],
): Promise<Map<string, boolean>> {
  if (policyIds.length === 0) return new Map();
  try {
    return await ctx.stores.gatePolicies.evaluate(client.orgSlug, userId, policyIds);
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    throw new OAuthError(
      'temporarily_unavailable',
      'the wallet requirements could not be checked now; try again',
      503,
    );
  }
}

/**
 * DESIGN §3 "Gates in tokens", at each issuance of a user's tokens (code, device code, refresh): the
 * app's required policy and the policy of every gated scope of the grant, evaluated over the user's
 * linked wallets (balances cached ≤ 5 minutes). Free when nothing is gated: no read at all when the
 * app requires nothing and the grant has only standard scopes.
 */
export async function decideGates(
  ctx: AppContext,
  client: Client,
  userId: string,
  scopes: string[],
): Promise<GateDecision> {
  const required = client.requiredGatePolicyId;
  const custom = scopes.some((s) => !STANDARD.has(s));
  const byScope = custom ? await ctx.stores.gatedScopes.ofBrand(client.brandId) : new Map<string, string>();
  const gated = scopes.filter((s) => byScope.has(s));
  if (!required && gated.length === 0)
    return { scopes, dropped: [], requirementMet: true, passedPolicies: [] };
  const policyIds = [...new Set([...(required ? [required] : []), ...gated.map((s) => byScope.get(s)!)])];
  const passed = await evaluate(ctx, client, userId, policyIds);
  const dropped = gated.filter((s) => passed.get(byScope.get(s)!) !== true);
  const requirementMet = !required || passed.get(required) === true;
  return {
    scopes: scopes.filter((s) => !dropped.includes(s)),
    dropped,
    requirementMet,
    passedPolicies: policyIds.filter((id) => passed.get(id) === true),
  };
}

/** Whether the user may sign in to the client: its required policy passes (or it has none). */
export async function meetsRequirement(ctx: AppContext, client: Client, userId: string): Promise<boolean> {
  const required = client.requiredGatePolicyId;
  if (!required) return true;
  return (await evaluate(ctx, client, userId, [required])).get(required) === true;
}

/**
 * A gate policy named by a scope (`gatePolicyId`) or an app (`requiredGatePolicyId`) must be one of
 * the org's: an unknown id or another org's policy is 400 `validation_failed` naming the field. The
 * foreign keys keep a named policy from being deleted (409).
 */
export async function checkGatePolicyReference(
  ctx: AppContext,
  tx: Tx,
  orgId: string,
  policyId: string | null | undefined,
  field: string,
): Promise<void> {
  if (policyId == null) return;
  if (await ctx.stores.gatePolicies.describe(orgId, policyId, tx)) return;
  throw validationFailed([
    { field, code: 'unknown_policy', message: 'not a gate policy of this organization' },
  ]);
}
