/** A gate policy's rule as the API takes it (DESIGN §3). */
export type GateRule =
  | { gate: string }
  | { all: GateRule[] }
  | { any: GateRule[] }
  | { atLeast: number; of: GateRule[] }
  | { not: GateRule };

export type RuleOp = 'gate' | 'all' | 'any' | 'atLeast' | 'not';

/** The rule builder's node: one shape for every operator, so switching operators keeps the parts. */
export interface RuleNode {
  op: RuleOp;
  /** The gate's id (a `gate` leaf); '' until one is picked. */
  gate: string;
  /** N of "at least N of". */
  atLeast: number;
  parts: RuleNode[];
}

/** DESIGN §3: a `{ gate }` leaf is depth 1; a rule is at most this deep. */
export const MAX_DEPTH = 5;

export const OP_LABELS: Record<RuleOp, string> = {
  gate: 'passes a gate',
  all: 'all of',
  any: 'any of',
  atLeast: 'at least N of',
  not: 'not',
};

export const leaf = (gate = ''): RuleNode => ({ op: 'gate', gate, atLeast: 1, parts: [] });

export function toNode(rule: GateRule): RuleNode {
  if ('gate' in rule) return leaf(rule.gate);
  if ('not' in rule) return { op: 'not', gate: '', atLeast: 1, parts: [toNode(rule.not)] };
  if ('atLeast' in rule)
    return { op: 'atLeast', gate: '', atLeast: rule.atLeast, parts: rule.of.map(toNode) };
  if ('all' in rule) return { op: 'all', gate: '', atLeast: 1, parts: rule.all.map(toNode) };
  return { op: 'any', gate: '', atLeast: 1, parts: rule.any.map(toNode) };
}

export function toRule(node: RuleNode): GateRule {
  const parts = () => node.parts.map(toRule);
  switch (node.op) {
    case 'gate':
      return { gate: node.gate };
    case 'not':
      return { not: toRule(node.parts[0] ?? leaf()) };
    case 'atLeast':
      return { atLeast: node.atLeast, of: parts() };
    case 'all':
      return { all: parts() };
    default:
      return { any: parts() };
  }
}

/**
 * The node with another operator: a compound keeps its parts (`not` keeps the first), a leaf
 * becoming a compound starts with itself as the first part (and a second, empty one for lists).
 */
export function withOp(node: RuleNode, op: RuleOp): RuleNode {
  if (op === node.op) return node;
  if (op === 'gate') return leaf(node.parts.find((p) => p.op === 'gate')?.gate ?? '');
  const parts = node.op === 'gate' ? [leaf(node.gate), ...(op === 'not' ? [] : [leaf()])] : node.parts;
  const kept = op === 'not' ? parts.slice(0, 1) : parts;
  return { op, gate: '', atLeast: Math.min(Math.max(node.atLeast, 1), kept.length), parts: kept };
}

/** The node at `path` replaced by `fn` of it. */
export function update(root: RuleNode, path: number[], fn: (n: RuleNode) => RuleNode): RuleNode {
  if (path.length === 0) return fn(root);
  const [i, ...rest] = path as [number, ...number[]];
  return { ...root, parts: root.parts.map((p, j) => (j === i ? update(p, rest, fn) : p)) };
}

/** The part `i` of the node at `path` removed ("at least" shrinks with its list). */
export function removePart(root: RuleNode, path: number[], i: number): RuleNode {
  return update(root, path, (n) => {
    const parts = n.parts.filter((_, j) => j !== i);
    return { ...n, parts, atLeast: Math.min(n.atLeast, Math.max(parts.length, 1)) };
  });
}

/** "Rule" for the root, "Part 2.1" for the first part of the root's second part. */
export function partLabel(path: number[]): string {
  return path.length === 0 ? 'Rule' : `Part ${path.map((i) => i + 1).join('.')}`;
}

/** What the builder must fix before the API sees the rule: by part label, in reading order. */
export function ruleProblems(node: RuleNode, path: number[] = []): [string, string][] {
  const label = partLabel(path);
  if (node.op === 'gate') return node.gate ? [] : [[label, 'Pick a gate.']];
  const own: [string, string][] = [];
  if (node.parts.length === 0) own.push([label, 'Add at least one part.']);
  if (
    node.op === 'atLeast' &&
    (!Number.isInteger(node.atLeast) || node.atLeast < 1 || node.atLeast > node.parts.length)
  )
    own.push([label, `N is a whole number from 1 to ${node.parts.length}.`]);
  return [...own, ...node.parts.flatMap((p, i) => ruleProblems(p, [...path, i]))];
}

/** The rule in words, with gates by name: "all of (Holders, not (Whales))". */
export function describeRule(rule: GateRule, gateName: (id: string) => string): string {
  const list = (rs: GateRule[]) => rs.map((r) => describeRule(r, gateName)).join(', ');
  if ('gate' in rule) return gateName(rule.gate);
  if ('not' in rule) return `not (${describeRule(rule.not, gateName)})`;
  if ('atLeast' in rule) return `at least ${rule.atLeast} of (${list(rule.of)})`;
  if ('all' in rule) return `all of (${list(rule.all)})`;
  return `any of (${list(rule.any)})`;
}

/** The distinct gate ids of a rule, in first-use order. */
export function ruleGates(rule: GateRule): string[] {
  const ids = new Set<string>();
  const walk = (r: GateRule) => {
    if ('gate' in r) ids.add(r.gate);
    else if ('not' in r) walk(r.not);
    else for (const p of 'atLeast' in r ? r.of : 'all' in r ? r.all : r.any) walk(p);
  };
  walk(rule);
  return [...ids];
}

/**
 * The bulk tester's wallet list: one address per line (commas and spaces separate too), duplicates
 * kept, in the order pasted.
 */
export function parseWallets(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}
