import { type Static, type TSchema, Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import type { GateRuleJson } from '../../db/schema.js';
import { Name, Nullable } from '../../http/schemas.js';
import { RULE_MAX_GATES } from './policy-rule.js';
import { Attest, Attestation } from './token-gates.schemas.js';

const PathId = Type.String({ minLength: 1, maxLength: 100 });
const Description = Type.String({ maxLength: limits.descriptionMax });
const GateId = Type.String({ minLength: 1, maxLength: 100 });

/**
 * One level of a rule: `{ gate }`, `{ all: [...] }`, `{ any: [...] }`, `{ atLeast: n, of: [...] }` or
 * `{ not: rule }`. The schema goes five levels deep (DESIGN's bound) and the depth is checked again
 * by the service; which keys go together, the bounds of `atLeast` and non-empty lists are checked by
 * the service, which answers 400 `validation_failed` naming `rule`.
 */
function ruleLevel(child: TSchema): TSchema {
  const list = Type.Array(child, { maxItems: RULE_MAX_GATES });
  return Type.Object(
    {
      gate: Type.Optional(GateId),
      all: Type.Optional(list),
      any: Type.Optional(list),
      atLeast: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
      of: Type.Optional(list),
      not: Type.Optional(child),
    },
    { additionalProperties: false, minProperties: 1, maxProperties: 2 },
  );
}

/**
 * Below the fifth level only an object of at most two keys gets through the schema, so that a rule
 * too deep is refused by the service naming `rule` like every other rule error.
 */
const TooDeep = Type.Object({}, { maxProperties: 2 });
export const GateRuleLevel1 = ruleLevel(TooDeep);
export const GateRuleLevel2 = ruleLevel(GateRuleLevel1);
export const GateRuleLevel3 = ruleLevel(GateRuleLevel2);
export const GateRuleLevel4 = ruleLevel(GateRuleLevel3);
/** A gate policy's rule (at most five levels; a `{ gate }` leaf is one level). */
export const GateRule = ruleLevel(GateRuleLevel4);

/**
 * The same five levels for request bodies, as `$defs` of the body that refer to each other. A level
 * names its child four times (`all`, `any`, `of`, `not`): written out, the body held 4^5 copies of
 * the last level, a 187 KB schema whose validator took 0.8 s to compile at every start (twice: create
 * and update) and which the API description repeated in full. Referred to, each level is compiled and
 * described once. The document hoists them into its components (src/openapi/document.ts).
 */
const inputLevel = (child: string | null) =>
  ruleLevel(child ? Type.Unsafe<GateRuleJson>({ $ref: `#/$defs/${child}` }) : TooDeep);
const RULE_INPUT_DEFS = {
  GateRuleInputLevel1: inputLevel(null),
  GateRuleInputLevel2: inputLevel('GateRuleInputLevel1'),
  GateRuleInputLevel3: inputLevel('GateRuleInputLevel2'),
  GateRuleInputLevel4: inputLevel('GateRuleInputLevel3'),
  GateRuleInput: inputLevel('GateRuleInputLevel4'),
};
const RuleInput = Type.Unsafe<GateRuleJson>({ $ref: '#/$defs/GateRuleInput' });

export const PolicyListParams = Type.Object({ orgSlug: PathId });
export const PolicyParams = Type.Object({ orgSlug: PathId, policyId: PathId });

export const GatePolicySchema = Type.Object({
  id: Type.String(),
  /** The org's slug. */
  org: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  rule: GateRule,
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type GatePolicyView = Static<typeof GatePolicySchema>;

export const CreatePolicyBody = Type.Object(
  { name: Name, description: Type.Optional(Description), rule: RuleInput },
  { additionalProperties: false, $defs: RULE_INPUT_DEFS },
);
export type CreatePolicyInput = Static<typeof CreatePolicyBody>;

export const UpdatePolicyBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    rule: Type.Optional(RuleInput),
  },
  { additionalProperties: false, minProperties: 1, $defs: RULE_INPUT_DEFS },
);
export type UpdatePolicyInput = Static<typeof UpdatePolicyBody>;

export const PolicyListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: limits.orgListLimitMax, default: limits.orgListLimitDefault }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const GatePolicyListSchema = Type.Object({
  items: Type.Array(GatePolicySchema),
  total: Type.Integer(),
});

const Reason = Nullable(
  Type.Union([
    Type.Literal('insufficientBalance'),
    Type.Literal('gateDisabled'),
    Type.Literal('walletNotFound'),
  ]),
);

/** One gate of a policy check: the gate check's answer for it. */
export const PolicyGateResultSchema = Type.Object({
  gateId: Type.String(),
  hasAccess: Type.Boolean(),
  balance: Nullable(Type.String()),
  reason: Reason,
});

export const PolicyCheckQuery = Type.Object(
  {
    walletAddress: Type.String({ minLength: 1, maxLength: 100 }),
    refresh: Type.Optional(Type.Literal('true')),
    attest: Attest,
  },
  { additionalProperties: false },
);

export const PolicyCheckResultSchema = Type.Object({
  hasAccess: Type.Boolean(),
  /** Every distinct gate of the rule, each evaluated, in first-use order. */
  gates: Type.Array(PolicyGateResultSchema),
  /** With `attest=true`: the policy's answer signed (claims `policy` and `has_access`, no per-gate detail). */
  attestation: Attestation,
});
export type PolicyCheckResult = Static<typeof PolicyCheckResultSchema>;
