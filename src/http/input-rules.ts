import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * One rule for every value a request carries, applied to every route's schema when the route is
 * registered (see `installInputRules`), so no route can forget it:
 *
 * - every string has a length bound and holds neither a NUL character nor an unpaired UTF-16
 *   surrogate (PostgreSQL refuses `\u0000` in text and jsonb, and a lone `\ud800` escape in jsonb,
 *   with an error that would otherwise surface as a 500);
 * - every integer and number has a minimum and a maximum inside PostgreSQL's `integer` range;
 * - every array has a bound on its length.
 *
 * What a schema already declares is kept (the interface's field limits); only what is missing is
 * added, as plain JSON Schema keywords (`maxLength`, `pattern`, `maximum`, …) so the OpenAPI
 * document generated from the same schemas shows the bounds too.
 */

/**
 * A string matching this holds no NUL and no unpaired surrogate. ECMA-262 syntax with the `u` flag
 * (as AJV and JSON Schema read patterns): a surrogate pair is one code point outside the range.
 */
export const SAFE_TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';

export const inputDefaults = {
  /** Length bound for a string that declares none: above the longest legitimate value (a signed
   * JWT, a SIWS message, a redirect URI) and below PostgreSQL's B-tree index row limit (2704 B). */
  maxLength: 2048,
  /** PostgreSQL `integer` range: any integer may reach an int4 column or a LIMIT/OFFSET. */
  minimum: -2147483648,
  maximum: 2147483647,
  /** Length bound for an array that declares none. */
  maxItems: 1000,
} as const;

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function types(s: Schema): string[] {
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type as string[];
  return [];
}

/**
 * True when `pattern` provably cannot match a string holding a NUL or an unpaired surrogate:
 * anchored at both ends, no top-level alternation, and built only of characters and classes that
 * leave both out (no `.`, no negated class, no `\S`, `\W`, `\D`, `\P`, no escape of NUL, no `\u`
 * escape or non-ASCII character in a class). Ranges only ascend, so an ASCII range that does not
 * start at NUL contains neither. Anything this cannot prove gets the guard.
 */
export function patternRefusesUnsafeText(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return false;
  const nulEscape = /\\(?:[SWDPc0]|x00|u0000|u\{0+\})/;
  const classes = pattern.match(/\[(?:\\.|[^\]\\])*\]/g) ?? [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for characters beyond ASCII
  const wide = /\\u|[^\x00-\x7f]/;
  if (classes.some((c) => c.startsWith('[^') || nulEscape.test(c) || wide.test(c))) return false;
  const outside = pattern.replace(/\[(?:\\.|[^\]\\])*\]/g, 'C').replace(/\\[^SWDPc0xu]/g, 'E');
  if (/[.|]/.test(outside) || nulEscape.test(outside) || /\\[xu]/.test(outside)) return false;
  try {
    const re = new RegExp(pattern, 'u');
    return ['\u0000', 'a\u0000', '\u0000a', '\uD800', 'a\uDFFF'].every((bad) => !re.test(bad));
  } catch {
    return false;
  }
}

const safeText = new RegExp(SAFE_TEXT_PATTERN, 'u');

/** The rule for a string read outside any schema (a header's decoded parts): bounded, clean text. */
export const isSafeText = (s: string, maxLength: number = inputDefaults.maxLength) =>
  s.length <= maxLength && safeText.test(s);

const TEXT_GUARD = '(?=[^\\u0000\\uD800-\\uDFFF]*$)';

const isNulSafe = (p: string) =>
  p === SAFE_TEXT_PATTERN || p.startsWith(`^${TEXT_GUARD}`) || patternRefusesUnsafeText(p);

/** The schema's string rule: `pattern` extended (not replaced) so that it also refuses NUL. */
function guardPattern(pattern: string | undefined): string {
  if (pattern === undefined) return SAFE_TEXT_PATTERN;
  if (isNulSafe(pattern)) return pattern;
  // A JSON Schema pattern matches anywhere in the string; keep that meaning after the look-ahead.
  return `^${TEXT_GUARD}[\\s\\S]*?(?:${pattern})`;
}

/** The pattern a route declared, from the one the rule made of it. */
export function declaredPattern(pattern: string): string {
  const prefix = `^${TEXT_GUARD}[\\s\\S]*?(?:`;
  return pattern.startsWith(prefix) && pattern.endsWith(')') ? pattern.slice(prefix.length, -1) : pattern;
}

/** True when every value `s` accepts is a fixed, NUL-free string (an `enum` or a `const`). */
function isClosedString(s: Schema): boolean {
  const fixed = (v: unknown) => typeof v !== 'string' || safeText.test(v);
  if ('const' in s) return fixed(s.const);
  if (Array.isArray(s.enum)) return s.enum.every(fixed);
  return false;
}

const isUnconstrained = (s: Schema) =>
  Object.keys(s).filter((k) => k !== 'description' && k !== 'title' && !k.startsWith('~')).length === 0;

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMA_ONE = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
] as const;

/**
 * Returns a copy of a request schema (body, querystring, params, headers) with the rule applied
 * wherever the schema leaves a bound out. Shared schema objects are never modified.
 */
export function hardenSchema<T>(schema: T): T {
  return harden(schema as unknown) as T;
}

/**
 * Hardened copies by source schema: a schema shared by several routes (or holding an `$id`) is
 * hardened once and stays one object, so AJV never sees two different schemas with one `$id`.
 */
const hardened = new WeakMap<object, unknown>();

function harden(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(harden);
  if (!isObject(node)) return node;
  const done = hardened.get(node);
  if (done !== undefined) return done;
  const out = hardenNode(node);
  hardened.set(node, out);
  return out;
}

function hardenNode(node: Schema): Schema {
  const out: Schema = { ...node };
  for (const key of SUBSCHEMA_MAPS) {
    const map = out[key];
    if (isObject(map)) out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, harden(v)]));
  }
  for (const key of SUBSCHEMA_LISTS)
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(harden);
  for (const key of SUBSCHEMA_ONE) if (isObject(out[key])) out[key] = harden(out[key]);
  const t = types(out);
  if (t.includes('string') && !isClosedString(out)) {
    if (out.maxLength === undefined) out.maxLength = inputDefaults.maxLength;
    out.pattern = guardPattern(out.pattern as string | undefined);
  }
  if (t.includes('integer') || t.includes('number')) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = inputDefaults.maximum;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = inputDefaults.minimum;
  }
  if (t.includes('array') && out.maxItems === undefined) out.maxItems = inputDefaults.maxItems;
  return out;
}

/** The one kind of `$ref` the rule follows: to a schema in the root's `$defs`, checked where it is defined. */
export const LOCAL_REF = /^#\/\$defs\/([A-Za-z0-9_]+)$/;

/** Every `$ref` string under `node`. */
function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsIn(n, out);
  else if (isObject(node))
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  return out;
}

/**
 * A root schema's local references: each must name one of its `$defs`, and no def may reach itself,
 * since a cycle is a depth no schema bounds (AJV would recurse as deep as the body nests).
 */
function localRefViolations(root: Schema): string[] {
  const defs = isObject(root.$defs) ? root.$defs : {};
  const out: string[] = [];
  for (const ref of new Set(refsIn(root))) {
    const name = LOCAL_REF.exec(ref)?.[1];
    if (name !== undefined && !Object.hasOwn(defs, name)) out.push(`: ${ref} names no schema in $defs`);
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string): boolean => {
    if (state.get(name) === 'done' || !Object.hasOwn(defs, name)) return false;
    if (state.get(name) === 'visiting') return true;
    state.set(name, 'visiting');
    const cyclic = refsIn(defs[name]).some((ref) => {
      const next = LOCAL_REF.exec(ref)?.[1];
      return next !== undefined && visit(next);
    });
    state.set(name, 'done');
    return cyclic;
  };
  for (const name of Object.keys(defs))
    if (visit(name)) out.push(`/$defs/${name}: refers back to itself; a rule's depth must be bounded`);
  return out;
}

/**
 * Where a request schema breaks the rule, as JSON pointers with the reason: the check behind the
 * route test that every registered route is covered, and behind `installInputRules`'s start-up guard.
 */
export function inputRuleViolations(node: unknown, path = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => inputRuleViolations(n, `${path}/${i}`));
  if (!isObject(node)) return [];
  const rootRefs = path === '' ? localRefViolations(node) : [];
  if (node.$ref !== undefined) {
    if (typeof node.$ref === 'string' && LOCAL_REF.test(node.$ref) && Object.keys(node).length === 1)
      return rootRefs;
    return [`${path}: a $ref the rule cannot follow; inline the schema or refer to the root's $defs`];
  }
  if (isUnconstrained(node)) return [`${path}: accepts any value; give it a schema`];
  const out: string[] = [...rootRefs];
  for (const key of SUBSCHEMA_MAPS) {
    const map = node[key];
    if (isObject(map))
      for (const [k, v] of Object.entries(map)) out.push(...inputRuleViolations(v, `${path}/${key}/${k}`));
  }
  for (const key of SUBSCHEMA_LISTS)
    if (Array.isArray(node[key])) out.push(...inputRuleViolations(node[key], `${path}/${key}`));
  for (const key of SUBSCHEMA_ONE)
    if (isObject(node[key])) out.push(...inputRuleViolations(node[key], `${path}/${key}`));
  const t = types(node);
  if (t.includes('string') && !isClosedString(node)) {
    if (typeof node.maxLength !== 'number') out.push(`${path}: string without maxLength`);
    const p = node.pattern;
    if (typeof p !== 'string' || !isNulSafe(p)) out.push(`${path}: string whose pattern allows NUL`);
  }
  if (t.includes('integer') || t.includes('number')) {
    const max = (node.maximum ?? node.exclusiveMaximum) as number | undefined;
    const min = (node.minimum ?? node.exclusiveMinimum) as number | undefined;
    if (typeof max !== 'number' || max > Number.MAX_SAFE_INTEGER)
      out.push(`${path}: number without a safe maximum`);
    if (typeof min !== 'number' || min < -Number.MAX_SAFE_INTEGER)
      out.push(`${path}: number without a safe minimum`);
  }
  if (t.includes('array') && typeof node.maxItems !== 'number') out.push(`${path}: array without maxItems`);
  return out;
}

const PARTS = ['body', 'querystring', 'params', 'headers'] as const;

export interface RouteInputs {
  method: string;
  url: string;
  schema: Partial<Record<(typeof PARTS)[number], unknown>>;
}

/** The registered routes of each app, with their hardened schemas: what the route tests walk. */
const registered = new WeakMap<FastifyInstance, RouteInputs[]>();
export const registeredRoutes = (app: FastifyInstance): RouteInputs[] => registered.get(app) ?? [];

const paramNames = (url: string) => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);

/** Declares the URL's path parameters the params schema leaves out, as bounded strings. */
function withAllParams(url: string, params: unknown): unknown {
  const names = paramNames(url);
  if (names.length === 0) return params;
  const base = (isObject(params) ? params : { type: 'object', properties: {} }) as Schema;
  const properties = { ...((base.properties as Schema | undefined) ?? {}) };
  for (const n of names) properties[n] ??= { type: 'string' };
  const required = [...new Set([...((base.required as string[] | undefined) ?? []), ...names])];
  return { ...base, properties, required };
}

/**
 * Applies the rule to every route registered on `app` after this call. A route whose schema still
 * breaks it (an unconstrained value, a `$ref` outside the root's `$defs`, a cycle) stops the app from
 * starting, naming route and field.
 */
export function installInputRules(app: FastifyInstance): void {
  const routes: RouteInputs[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = { ...(route.schema ?? {}) } as Record<string, unknown>;
    const params = withAllParams(route.url, schema.params);
    if (params !== undefined) schema.params = params;
    const problems: string[] = [];
    for (const part of PARTS) {
      if (schema[part] === undefined) continue;
      schema[part] = hardenSchema(schema[part]);
      problems.push(...inputRuleViolations(schema[part]).map((p) => `${part}${p}`));
    }
    const method = [route.method].flat().join(',');
    if (problems.length > 0)
      throw new Error(`route ${method} ${route.url} breaks the input rule: ${problems.join('; ')}`);
    route.schema = schema as RouteOptions['schema'];
    routes.push({ method, url: route.url, schema: schema as RouteInputs['schema'] });
  });
}
