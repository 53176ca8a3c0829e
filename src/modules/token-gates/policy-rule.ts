import type { GateRuleJson } from '../../db/schema.js';
import { validationFailed } from '../../http/errors.js';

/** DESIGN §3: a `{ gate }` leaf is depth 1; a rule is at most this deep. */
export const RULE_MAX_DEPTH = 5;
/** DESIGN §3: at most this many distinct gates in one rule. */
export const RULE_MAX_GATES = 50;

export type GateRule = GateRuleJson;

const ruleError = (message: string) => validationFailed([{ field: 'rule', code: 'invalid_value', message }]);

const OPERATORS = ['gate', 'all', 'any', 'atLeast', 'not'] as const;

/**
 * Checks a rule's shape and bounds (depth ≤ 5, non-empty lists, 1 ≤ atLeast ≤ list length, ≤ 50
 * distinct gates) and returns its distinct gate ids in first-use order. Anything else is a 400
 * `validation_failed` naming `rule`. Whether the gates exist in the org is the service's check.
 */
export function ruleGateIds(rule: GateRule): string[] {
  const ids = new Set<string>();
  walk(rule, 1, ids);
  if (ids.size > RULE_MAX_GATES) throw ruleError(`a rule names at most ${RULE_MAX_GATES} distinct gates`);
  return [...ids];
}

function walk(node: unknown, depth: number, ids: Set<string>): void {
  if (depth > RULE_MAX_DEPTH) throw ruleError(`a rule is at most ${RULE_MAX_DEPTH} levels deep`);
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    throw ruleError('each part of a rule is an object');
  const keys = Object.keys(node);
  const r = node as Record<string, unknown>;
  const op = OPERATORS.find((o) => o in r);
  const expected = op === 'atLeast' ? ['atLeast', 'of'] : op ? [op] : [];
  if (!op || keys.length !== expected.length || !expected.every((k) => k in r))
    throw ruleError('each part is { gate } | { all } | { any } | { atLeast, of } | { not }');
  if (op === 'gate') {
    if (typeof r.gate !== 'string' || r.gate.length === 0) throw ruleError('gate is a gate id');
    ids.add(r.gate);
    return;
  }
  if (op === 'not') {
    walk(r.not, depth + 1, ids);
    return;
  }
  const list = op === 'atLeast' ? r.of : r[op];
  if (!Array.isArray(list) || list.length === 0)
    throw ruleError(`${op === 'atLeast' ? 'of' : op} is a non-empty list`);
  if (op === 'atLeast') {
    const n = r.atLeast;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > list.length)
      throw ruleError('atLeast is an integer from 1 to the length of of');
  }
  for (const child of list) walk(child, depth + 1, ids);
}

/** The rule's answer given each gate's answer (every gate of the rule must be in `passed`). */
export function evaluateRule(rule: GateRule, passed: ReadonlyMap<string, boolean>): boolean {
  if ('gate' in rule) return passed.get(rule.gate) === true;
  if ('not' in rule) return !evaluateRule(rule.not, passed);
  if ('all' in rule) return rule.all.every((r) => evaluateRule(r, passed));
  if ('any' in rule) return rule.any.some((r) => evaluateRule(r, passed));
  let n = 0;
  for (const r of rule.of) if (evaluateRule(r, passed)) n++;
  return n >= rule.atLeast;
}
