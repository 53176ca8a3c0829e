import fc from 'fast-check';
import { declaredPattern, LOCAL_REF, SAFE_TEXT_PATTERN } from '../../src/http/input-rules.js';

/**
 * fast-check arbitraries from a route's own JSON Schema (TypeBox output, after the input rule):
 * values the schema accepts, boundary values, and hostile ones at any leaf. Only the keywords our
 * schemas use are read; anything else falls back to "any JSON value".
 */
type Schema = Record<string, unknown>;

/** Strings that have hurt web services: NUL, lone surrogates, encodings, injections, odd lengths. */
export const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '%00',
  '%',
  '../../../etc/passwd',
  '\u202Egnp.exe',
  '\r\nX-Injected: 1',
  "'; drop table users; --",
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  ' ',
  '',
  '😀'.repeat(300),
  'a'.repeat(3000),
  'é'.repeat(70_000),
];

export const HOSTILE_NUMBERS = [
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e20,
  -1e20,
  1e308,
  1.5,
  -0,
  0,
  -1,
];

/** A value nested `depth` levels deep, as JSON text (building it as an object would be the same). */
export const deeplyNested = (depth: number) => `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;

/** Marks a key that must be sent as `__proto__` (an object literal cannot hold it as a plain key). */
export const PROTO_KEY = '\u0001proto\u0001';

const wrongTypes = fc.constantFrom<unknown>(null, true, false, 0, -1, 'text', [], {}, [[[]]], {
  a: { b: {} },
});

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS),
  wrongTypes,
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom<unknown>({ [PROTO_KEY]: { admin: true } }, { constructor: { prototype: { admin: true } } }),
);

const typesOf = (s: Schema): string[] =>
  typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : [];

/** A JSON Schema pattern as a RegExp fast-check can generate from (the NUL guard left out). */
function generatorPattern(pattern: string): RegExp | null {
  if (pattern === SAFE_TEXT_PATTERN) return null;
  try {
    return new RegExp(declaredPattern(pattern), 'u');
  } catch {
    return null;
  }
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = Math.min((s.maxLength as number | undefined) ?? 40, 40);
  const bounded = (a: fc.Arbitrary<string>) => a.map((v) => v.slice(0, (s.maxLength as number) ?? v.length));
  switch (s.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return bounded(fc.webUrl({ validSchemes: ['https'] }));
    case 'email':
      return bounded(fc.emailAddress());
  }
  const re = typeof s.pattern === 'string' ? generatorPattern(s.pattern) : null;
  const base = re
    ? bounded(fc.stringMatching(re))
    : fc.string({ minLength: min, maxLength: Math.max(min, max) });
  const edges = [min, (s.maxLength as number | undefined) ?? 0]
    .filter((n) => n > 0 && n <= 5000)
    .map((n) => 'a'.repeat(n));
  return edges.length ? fc.oneof({ weight: 5, arbitrary: base }, fc.constantFrom(...edges)) : base;
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = (s.minimum as number | undefined) ?? (s.exclusiveMinimum as number | undefined) ?? -1e6;
  const max = (s.maximum as number | undefined) ?? (s.exclusiveMaximum as number | undefined) ?? 1e6;
  const lo = Math.max(min, -(2 ** 31));
  const hi = Math.min(max, 2 ** 31 - 1);
  const inner = integer
    ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) })
    : fc.double({ min: lo, max: hi, noNaN: true });
  return fc.oneof({ weight: 4, arbitrary: inner }, fc.constantFrom(lo, hi));
}

/**
 * The schema with its local references (`#/$defs/…`, which the input rule allows and keeps acyclic)
 * replaced by what they name, so the generators below see one tree.
 */
export function inlineLocalRefs(schema: unknown): unknown {
  const defs = ((schema as Schema | null)?.$defs ?? {}) as Record<string, unknown>;
  const done = new Map<string, unknown>();
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const ref = (node as Schema).$ref;
    const name = typeof ref === 'string' ? LOCAL_REF.exec(ref)?.[1] : undefined;
    if (name !== undefined) {
      if (!done.has(name)) done.set(name, walk(defs[name]));
      return done.get(name);
    }
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k]) => k !== '$defs')
        .map(([k, v]) => [k, walk(v)]),
    );
  };
  return walk(schema);
}

/** Values `schema` should accept (mostly: generated patterns are cut to maxLength). */
export function validArb(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const s = ((depth === 0 ? inlineLocalRefs(schema) : schema) ?? {}) as Schema;
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (union) return fc.oneof(...union.map((u) => validArb(u, depth)));
  const t = typesOf(s);
  if (t.length > 1) return fc.oneof(...t.map((type) => validArb({ ...s, type }, depth)));
  switch (t[0]) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validArb(s.items, depth + 1), {
        minLength: (s.minItems as number | undefined) ?? 0,
        maxLength: Math.min((s.maxItems as number | undefined) ?? 4, 4),
      });
    case 'object':
      return objectArb(s, depth, validArb);
  }
  return depth > 2 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
}

function objectArb(
  s: Schema,
  depth: number,
  leaf: (schema: unknown, depth: number) => fc.Arbitrary<unknown>,
): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const record = fc.record(
    Object.fromEntries(Object.entries(props).map(([k, v]) => [k, leaf(v, depth + 1)])),
    { requiredKeys: Object.keys(props).filter((k) => required.has(k)) },
  );
  const pattern = s.patternProperties as Record<string, unknown> | undefined;
  if (!pattern) return record as fc.Arbitrary<Record<string, unknown>>;
  const values = Object.values(pattern)[0];
  const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), leaf(values, depth + 1), {
    maxKeys: 4,
  });
  return fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...a }));
}

/**
 * Like validArb, but any leaf may be hostile (NUL, surrogates, huge numbers, a wrong type, a
 * prototype key) and objects may carry unknown or prototype keys: one leaf at a time is the common
 * case, so most of a request is still valid and reaches past the first check.
 */
export function fuzzArb(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const s = ((depth === 0 ? inlineLocalRefs(schema) : schema) ?? {}) as Schema;
  const t = typesOf(s);
  const structured = t.includes('object') && !('const' in s) && !s.enum && !s.anyOf;
  const own: fc.Arbitrary<unknown> = structured
    ? fc
        .tuple(
          objectArb(s, depth, (sub, d) =>
            fc.oneof({ weight: 6, arbitrary: validArb(sub, d) }, { weight: 1, arbitrary: fuzzArb(sub, d) }),
          ),
          fc.option(fc.constantFrom(PROTO_KEY, 'constructor', 'prototype', 'unknownField', 'toString'), {
            freq: 4,
          }),
          hostileValue,
        )
        .map(([o, key, v]) => (key === null ? o : { ...o, [key]: v }))
    : validArb(s, depth);
  return fc.oneof({ weight: 5, arbitrary: own }, { weight: 2, arbitrary: hostileValue });
}

/** JSON text for a generated value, with PROTO_KEY written as a real `"__proto__"` key. */
export const toJson = (v: unknown) => JSON.stringify(v).split(JSON.stringify(PROTO_KEY)).join('"__proto__"');

/** A value as one form or query-string field (strings as they are, the rest as JSON). */
export const asField = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined ? '' : toJson(v).replace(/^"|"$/g, '');

/**
 * Percent-encodes a path segment, lone surrogates included (as their 3-byte WTF-8 form, which is
 * not valid UTF-8: exactly what a hostile client can put on the wire; encodeURIComponent throws).
 */
export function encodeSegment(value: string): string {
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0) as number;
    if (/[A-Za-z0-9\-_.~]/.test(ch)) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}
