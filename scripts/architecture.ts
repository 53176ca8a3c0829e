// The architecture check: the layering of docs/ARCHITECTURE.md, who may build SQL, no hidden imports,
// no folder cycles, no long functions. Read with the TypeScript parser (one file at a time, no type
// checker), so it runs in about a second. `npm run arch` prints the violations;
// test/foundation/architecture.test.ts fails on them.
//
// "Type-only" means written `import type` / `export type` or with `type` on every name: biome's
// `useImportType` (on in our lint) makes every import that brings only types say so.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const RULES = {
  'layer-order':
    'a file imports a value only from its own layer or the layers below it (docs/ARCHITECTURE.md)',
  'layer-unknown': 'every folder under src/ has a layer (LAYERS in scripts/architecture.ts)',
  'oidc-no-modules': 'src/oidc imports nothing from src/modules (the engine declares store interfaces)',
  'oidc-no-db-values': 'src/oidc imports no value from src/db (types only)',
  'providers-no-modules': 'src/providers and src/solana import nothing from src/modules',
  'providers-no-oidc': 'src/providers and src/solana import nothing from src/oidc',
  'modules-no-stores': 'src/modules imports nothing from src/stores (engine stores come via ctx.stores)',
  'db-no-http': 'src/db imports nothing from src/http',
  'query-builder-owner':
    'only *.queries.ts, src/stores/** and src/db/** build SQL (selectFrom, insertInto, updateTable, deleteFrom, sql`…`)',
  'table-owner':
    'each table is queried (from, into, update, delete) in one file outside src/db: its owner; others call that file',
  'no-dynamic-import-expression': 'import() names its module with a string literal',
  'no-folder-cycle': 'no cycle of value imports between folders',
  'function-length':
    'no function longer than 80 lines (a plugin that registers routes is exempt, its handlers are not)',
} as const;
export type Rule = keyof typeof RULES;

export interface Violation {
  rule: Rule;
  /** Path relative to the repository root, with `/`. */
  file: string;
  line: number;
  message: string;
}

export const MAX_FUNCTION_LINES = 80;

/**
 * The layers, top to bottom (docs/ARCHITECTURE.md). A file may import values from its own layer and
 * the layers below; type-only imports may point anywhere except where a named rule forbids them.
 * Keys are folders under src/ ('' = the files directly in src/, the root composition).
 */
export const LAYERS: ReadonlyArray<{ name: string; folders: string[] }> = [
  { name: 'root composition', folders: [''] },
  { name: 'surfaces', folders: ['jobs', 'console', 'openapi', 'dev'] },
  { name: 'stores', folders: ['stores'] },
  { name: 'modules', folders: ['modules'] },
  { name: 'engine', folders: ['oidc'] },
  { name: 'upstream clients', folders: ['providers', 'solana'] },
  { name: 'events and ops', folders: ['events', 'ops'] },
  { name: 'http', folders: ['http'] },
  { name: 'db', folders: ['db'] },
  { name: 'config and lib', folders: ['config', 'lib'] },
];

const QUERY_BUILDER_METHODS = new Set([
  'selectFrom',
  'insertInto',
  'updateTable',
  'deleteFrom',
  'replaceInto',
  'mergeInto',
  'selectNoFrom',
]);
const ROUTE_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'all']);
const SOURCE_EXT = /\.(ts|js|mjs|cjs)$/;

interface Edge {
  from: string;
  to: string;
  line: number;
  typeOnly: boolean;
}

/** src/<top>/… → '<top>'; a file directly in src/ → ''. */
function topFolder(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1] : '';
}

function layerOf(file: string): number {
  const top = topFolder(file);
  return LAYERS.findIndex((l) => l.folders.includes(top));
}

function under(file: string, folder: string): boolean {
  return file.startsWith(`src/${folder}/`);
}

function mayBuildSql(file: string): boolean {
  return /\.queries\.ts$/.test(file) || under(file, 'stores') || under(file, 'db');
}

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

/** Resolves a relative specifier against the known files ('./x.js' may name x.ts). */
function resolve(from: string, spec: string, known: Set<string>): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const stem = base.replace(/\.(js|mjs|cjs|ts)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.js`, `${stem}.mjs`, `${base}/index.ts`, `${base}/index.js`]) {
    if (known.has(c)) return c;
  }
  return undefined;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // side-effect import
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const b = clause.namedBindings;
  if (!b || ts.isNamespaceImport(b)) return false;
  return b.elements.length > 0 && b.elements.every((e) => e.isTypeOnly);
}

function exportIsTypeOnly(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const c = node.exportClause;
  return !!c && ts.isNamedExports(c) && c.elements.length > 0 && c.elements.every((e) => e.isTypeOnly);
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunction(n: ts.Node): n is FunctionNode {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isFunctionExpression(n) ||
    ts.isArrowFunction(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n)
  );
}

/** Lines of a function's body between its braces (as biome's noExcessiveLinesPerFunction counts). */
function bodyLines(sf: ts.SourceFile, fn: FunctionNode): number {
  const body = fn.body;
  if (!body) return 0;
  const start = lineOf(sf, body.getStart(sf));
  const end = lineOf(sf, body.getEnd());
  if (ts.isBlock(body)) return Math.max(1, end - start - 1);
  return end - start + 1;
}

/** `(function () { … })()` / `(() => { … })()`: module scope of a browser script, not a function. */
function isIife(fn: FunctionNode): boolean {
  let p: ts.Node = fn.parent;
  while (ts.isParenthesizedExpression(p)) p = p.parent;
  return ts.isCallExpression(p) && (p.expression === fn || ts.isParenthesizedExpression(p.expression));
}

/** `app.get('/x', opts, handler)`, `app.route({ … handler })`: a Fastify route registration. */
function isRouteRegistration(n: ts.Node): n is ts.CallExpression {
  if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return false;
  const name = n.expression.name.text;
  if (name === 'route') {
    const a = n.arguments[0];
    return (
      n.arguments.length === 1 &&
      !!a &&
      ts.isObjectLiteralExpression(a) &&
      a.properties.some((p) => p.name && ts.isIdentifier(p.name) && p.name.text === 'handler')
    );
  }
  if (!ROUTE_METHODS.has(name) || n.arguments.length < 2) return false;
  const last = n.arguments[n.arguments.length - 1];
  return isFunction(last) || ts.isIdentifier(last) || ts.isObjectLiteralExpression(last);
}

interface FileFacts {
  edges: Edge[];
  violations: Violation[];
  /** Tables this file names as the target of a query-builder call, with the first line and count. */
  tables: Map<string, { line: number; calls: number }>;
}

/** Query-builder calls that make a file the user of a table (joins only read, and do not count). */
const TABLE_TARGET_METHODS = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'mergeInto']);

/** `'apps'`, `'apps as a'`, `'apps' as never` → apps. */
function tableName(arg: ts.Expression | undefined): string | undefined {
  let a = arg;
  while (a && (ts.isAsExpression(a) || ts.isParenthesizedExpression(a) || ts.isSatisfiesExpression(a))) {
    a = a.expression;
  }
  return a && ts.isStringLiteralLike(a) ? a.text.trim().split(/\s+/)[0] : undefined;
}

function analyseFile(file: string, text: string, known: Set<string>): FileFacts {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const edges: Edge[] = [];
  const violations: Violation[] = [];
  const at = (n: ts.Node) => lineOf(sf, n.getStart(sf));
  const sqlNames = new Set<string>();
  const registrationFunctions = new Set<ts.Node>();
  const tables = new Map<string, { line: number; calls: number }>();

  const addEdge = (spec: string, line: number, typeOnly: boolean) => {
    const to = resolve(file, spec, known);
    if (to) edges.push({ from: file, to, line, typeOnly });
  };

  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      addEdge(st.moduleSpecifier.text, at(st), importIsTypeOnly(st));
      const b = st.importClause?.namedBindings;
      if (st.moduleSpecifier.text === 'kysely' && b && ts.isNamedImports(b) && !st.importClause?.isTypeOnly) {
        for (const e of b.elements) if ((e.propertyName ?? e.name).text === 'sql') sqlNames.add(e.name.text);
      }
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      addEdge(st.moduleSpecifier.text, at(st), exportIsTypeOnly(st));
    }
  }

  const functions: FunctionNode[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const a = n.arguments[0];
      if (a && (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)))
        addEdge(a.text, at(n), false);
      else
        violations.push({
          rule: 'no-dynamic-import-expression',
          file,
          line: at(n),
          message: `import(${a ? a.getText(sf) : ''}) names its module by an expression the compiler cannot see`,
        });
    }
    if (
      ts.isImportTypeNode(n) &&
      ts.isLiteralTypeNode(n.argument) &&
      ts.isStringLiteral(n.argument.literal)
    ) {
      addEdge(n.argument.literal.text, at(n), true);
    }
    if (
      !under(file, 'db') &&
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      TABLE_TARGET_METHODS.has(n.expression.name.text)
    ) {
      const table = tableName(n.arguments[0]);
      if (table) {
        const seen = tables.get(table);
        if (seen) seen.calls++;
        else tables.set(table, { line: lineOf(sf, n.expression.name.getStart(sf)), calls: 1 });
      }
    }
    if (!mayBuildSql(file)) {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        QUERY_BUILDER_METHODS.has(n.expression.name.text)
      ) {
        violations.push({
          rule: 'query-builder-owner',
          file,
          line: lineOf(sf, n.expression.name.getStart(sf)),
          message: `.${n.expression.name.text}() outside a *.queries.ts / store / src/db file`,
        });
      }
      if (ts.isIdentifier(n) && sqlNames.has(n.text) && !ts.isImportSpecifier(n.parent)) {
        violations.push({
          rule: 'query-builder-owner',
          file,
          line: at(n),
          message: `kysely \`${n.text}\` outside a *.queries.ts / store / src/db file`,
        });
      }
    }
    if (isFunction(n)) functions.push(n);
    if (isRouteRegistration(n)) {
      for (let p: ts.Node | undefined = n.parent; p; p = p.parent)
        if (isFunction(p)) registrationFunctions.add(p);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);

  for (const fn of functions) {
    if (registrationFunctions.has(fn) || isIife(fn)) continue;
    const lines = bodyLines(sf, fn);
    if (lines > MAX_FUNCTION_LINES) {
      violations.push({
        rule: 'function-length',
        file,
        line: at(fn),
        message: `${functionName(fn, sf)} has ${lines} lines (max ${MAX_FUNCTION_LINES})`,
      });
    }
  }
  return { edges, violations, tables };
}

function scriptKind(file: string): ts.ScriptKind {
  return file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
}

function functionName(fn: FunctionNode, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(fn)) return 'constructor';
  if (fn.name) return fn.name.getText(sf);
  const p = fn.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) {
    return p.name.getText(sf);
  }
  if (ts.isCallExpression(p)) {
    const callee = p.expression.getText(sf);
    const first = p.arguments[0];
    const label = first && ts.isStringLiteralLike(first) ? ` '${first.text}'` : '';
    return `function passed to ${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}(${label.trim()})`;
  }
  return 'anonymous function';
}

function importRules(e: Edge): Violation[] {
  const out: Violation[] = [];
  const add = (rule: Rule, message: string) => out.push({ rule, file: e.from, line: e.line, message });
  const kind = e.typeOnly ? 'type import of' : 'imports';
  if (under(e.from, 'oidc') && under(e.to, 'modules')) add('oidc-no-modules', `${kind} ${e.to}`);
  if (under(e.from, 'oidc') && under(e.to, 'db') && !e.typeOnly)
    add('oidc-no-db-values', `imports a value from ${e.to}`);
  for (const f of ['providers', 'solana']) {
    if (under(e.from, f) && under(e.to, 'modules')) add('providers-no-modules', `${kind} ${e.to}`);
    if (under(e.from, f) && under(e.to, 'oidc')) add('providers-no-oidc', `${kind} ${e.to}`);
  }
  if (under(e.from, 'modules') && under(e.to, 'stores')) add('modules-no-stores', `${kind} ${e.to}`);
  if (under(e.from, 'db') && under(e.to, 'http')) add('db-no-http', `${kind} ${e.to}`);
  if (out.length === 0 && !e.typeOnly) {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (from >= 0 && to >= 0 && to < from) {
      add('layer-order', `imports ${e.to} (${LAYERS[from].name} → ${LAYERS[to].name}, which is above it)`);
    }
  }
  return out;
}

/**
 * How well a file's name says it owns `table`: 2 when its stem is the table (`apps.queries.ts` for
 * apps, `consent-grants.store.ts` for consent_grants), 1 when the table ends with it (`tokens.store.ts`
 * for refresh_tokens, `scopes.queries.ts` for brand_scopes), else 0.
 */
function nameMatch(file: string, table: string): number {
  const stem = posix
    .basename(file)
    .replace(/\.(queries|store)\.ts$/, '')
    .replace(/-/g, '_');
  if (stem === table || `${stem}s` === table || stem === `${table}s`) return 2;
  return table.endsWith(`_${stem}`) ? 1 : 0;
}

/**
 * A table queried from several files: the owner is the *.queries.ts / *.store.ts file whose name
 * matches the table best, then the one with the most calls; every other file is a violation at its
 * first call.
 */
function tableOwners(uses: Map<string, Map<string, { line: number; calls: number }>>): Violation[] {
  const violations: Violation[] = [];
  for (const [table, files] of uses) {
    if (files.size < 2) continue;
    const rank = ([file, u]: [string, { calls: number }]) => {
      const ownerFile = /\.(queries|store)\.ts$/.test(file);
      return (ownerFile ? 1e7 + nameMatch(file, table) * 1e6 : 0) + u.calls;
    };
    const sorted = [...files].sort((a, b) => rank(b) - rank(a) || a[0].localeCompare(b[0]));
    const owner = sorted[0][0];
    for (const [file, u] of sorted.slice(1)) {
      violations.push({
        rule: 'table-owner',
        file,
        line: u.line,
        message: `queries \`${table}\`, owned by ${owner} (${files.size} files query it): call the owner instead`,
      });
    }
  }
  return violations;
}

/**
 * Cycles between folders over value imports (type-only imports leave nothing at run time). For each
 * strongly connected set of folders: the shortest cycle through each of its folders, each cycle once.
 */
function folderCycles(edges: Edge[]): Violation[] {
  const graph = new Map<string, Map<string, Edge>>();
  for (const e of edges) {
    if (e.typeOnly) continue;
    const a = posix.dirname(e.from);
    const b = posix.dirname(e.to);
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    const out = graph.get(a)!;
    if (!out.has(b)) out.set(b, e);
  }
  const violations: Violation[] = [];
  for (const scc of stronglyConnected(graph)) {
    if (scc.length < 2) continue;
    const inScc = new Set(scc);
    const seen = new Set<string>();
    for (const start of [...scc].sort()) {
      const path = shortestCycle(graph, start, inScc);
      const folders = path.map((e) => posix.dirname(e.from));
      const key = [...folders].sort().join(' ') + '|' + folders.length;
      if (path.length === 0 || seen.has(key)) continue;
      seen.add(key);
      const hops = path.map((e) => `${posix.dirname(e.from)} → ${posix.dirname(e.to)} (${e.from}:${e.line})`);
      violations.push({
        rule: 'no-folder-cycle',
        file: path[0].from,
        line: path[0].line,
        message: `folder cycle: ${hops.join('; ')}`,
      });
    }
  }
  return violations;
}

function stronglyConnected(graph: Map<string, Map<string, Edge>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const nodes = new Set<string>([...graph.keys(), ...[...graph.values()].flatMap((m) => [...m.keys()])]);
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      out.push(comp);
    }
  };
  for (const v of [...nodes].sort()) if (!idx.has(v)) strong(v);
  return out;
}

function shortestCycle(graph: Map<string, Map<string, Edge>>, start: string, inScc: Set<string>): Edge[] {
  const prev = new Map<string, Edge>();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length) {
    const v = queue.shift()!;
    for (const [w, e] of graph.get(v) ?? []) {
      if (!inScc.has(w)) continue;
      if (w === start) {
        const path = [e];
        for (let x = v; x !== start; x = posix.dirname(prev.get(x)!.from)) path.unshift(prev.get(x)!);
        return path;
      }
      if (!seen.has(w)) {
        seen.add(w);
        prev.set(w, e);
        queue.push(w);
      }
    }
  }
  return [];
}

/**
 * Checks a set of source files given as repository-relative path → text (paths start with `src/`).
 * Returns the violations sorted by rule, file and line.
 */
export function checkSources(sources: Map<string, string>): Violation[] {
  const known = new Set(sources.keys());
  const edges: Edge[] = [];
  const violations: Violation[] = [];
  const unknownFolders = new Map<string, string>();
  const tableUses = new Map<string, Map<string, { line: number; calls: number }>>();
  for (const [file, text] of sources) {
    const facts = analyseFile(file, text, known);
    edges.push(...facts.edges);
    violations.push(...facts.violations);
    for (const [table, use] of facts.tables) {
      if (!tableUses.has(table)) tableUses.set(table, new Map());
      tableUses.get(table)!.set(file, use);
    }
    if (layerOf(file) < 0 && !unknownFolders.has(topFolder(file))) unknownFolders.set(topFolder(file), file);
  }
  for (const [folder, file] of unknownFolders) {
    violations.push({
      rule: 'layer-unknown',
      file,
      line: 1,
      message: `src/${folder}/ has no layer: add it to LAYERS and to the diagram in docs/ARCHITECTURE.md`,
    });
  }
  for (const e of edges) violations.push(...importRules(e));
  violations.push(...folderCycles(edges));
  violations.push(...tableOwners(tableUses));
  const order = Object.keys(RULES);
  return violations.sort(
    (a, b) =>
      order.indexOf(a.rule) - order.indexOf(b.rule) || a.file.localeCompare(b.file) || a.line - b.line,
  );
}

/** Every source file under `<root>/src`, read from disk. */
export function readSources(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (SOURCE_EXT.test(name) && !name.endsWith('.d.ts')) {
        out.set(relative(root, p).split(sep).join('/'), readFileSync(p, 'utf8'));
      }
    }
  };
  walk(join(root, 'src'));
  return out;
}

export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line}  [${v.rule}] ${v.message}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const violations = checkSources(readSources(root));
  for (const rule of Object.keys(RULES) as Rule[]) {
    const list = violations.filter((v) => v.rule === rule);
    if (list.length === 0) continue;
    console.log(`\n${rule} (${list.length}): ${RULES[rule]}`);
    for (const v of list) console.log(`  ${formatViolation(v)}`);
  }
  console.log(`\n${violations.length} violation(s)`);
  process.exitCode = violations.length ? 1 : 0;
}
