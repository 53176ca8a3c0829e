// `npm run route -- <operationId | path | METHOD path>`: where a route lives, file by file — the
// registration, its schemas, the functions its handler calls and what those call in turn (down to the
// *.queries.ts / store functions that hold the SQL). Reads the source with the TypeScript parser and
// the operation ids from clients/typescript/openapi.json (the document `npm run client:generate` wrote).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readSources } from './architecture.js';

export interface Operation {
  method: string;
  path: string;
  operationId: string;
}

export interface Site {
  file: string;
  line: number;
  name: string;
}

export interface RouteTrace {
  operation: Operation;
  route: Site;
  schemas: Array<{ part: string; site: Site | string }>;
  handler: Array<Site & { calls: Site[] }>;
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/** Every operation of the OpenAPI document. */
export function operations(document: { paths: Record<string, Record<string, { operationId?: string }>> }) {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method) && op.operationId)
        out.push({ method: method.toUpperCase(), path, operationId: op.operationId });
    }
  }
  return out;
}

/** The operations a query names: an operation id, a path (`:id` or `{id}`) or `METHOD path`. */
export function findOperations(all: Operation[], query: string): Operation[] {
  const q = query.trim();
  const m = /^([A-Za-z]+)\s+(\/\S*)$/.exec(q);
  const method = m ? m[1].toUpperCase() : undefined;
  const rawPath = m ? m[2] : q.startsWith('/') ? q : undefined;
  if (rawPath !== undefined) {
    const path = rawPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\?.*$/, '');
    return all.filter((o) => o.path === path && (!method || o.method === method));
  }
  const exact = all.filter((o) => o.operationId.toLowerCase() === q.toLowerCase());
  return exact.length ? exact : all.filter((o) => o.operationId.toLowerCase().includes(q.toLowerCase()));
}

interface ParsedFile {
  file: string;
  sf: ts.SourceFile;
  /** Local name → the file and exported name it comes from ('*' for a namespace import). */
  imports: Map<string, { file: string; name: string }>;
  /** Top-level declarations by name. */
  declarations: Map<string, ts.Node>;
}

class SourceIndex {
  private readonly parsed = new Map<string, ParsedFile>();

  constructor(readonly sources: Map<string, string>) {}

  file(file: string): ParsedFile | undefined {
    const hit = this.parsed.get(file);
    if (hit) return hit;
    const text = this.sources.get(file);
    if (text === undefined) return undefined;
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const imports = new Map<string, { file: string; name: string }>();
    const declarations = new Map<string, ts.Node>();
    for (const st of sf.statements) {
      if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
        const target = this.resolve(file, st.moduleSpecifier.text);
        const clause = st.importClause;
        if (!target || !clause) continue;
        if (clause.name) imports.set(clause.name.text, { file: target, name: 'default' });
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) imports.set(b.name.text, { file: target, name: '*' });
        if (b && ts.isNamedImports(b)) {
          for (const e of b.elements)
            imports.set(e.name.text, { file: target, name: (e.propertyName ?? e.name).text });
        }
      } else if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st)) {
        if (st.name) declarations.set(st.name.text, st);
      } else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations)
          if (ts.isIdentifier(d.name)) declarations.set(d.name.text, d);
      } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
        const target = this.resolve(file, st.moduleSpecifier.text);
        if (target && st.exportClause && ts.isNamedExports(st.exportClause)) {
          for (const e of st.exportClause.elements) {
            imports.set(e.name.text, { file: target, name: (e.propertyName ?? e.name).text });
          }
        }
      } else if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) {
        declarations.set(st.name.text, st);
      }
    }
    const p = { file, sf, imports, declarations };
    this.parsed.set(file, p);
    return p;
  }

  private resolve(from: string, spec: string): string | undefined {
    if (!spec.startsWith('.')) return undefined;
    const base = join(dirname(from), spec).split('\\').join('/');
    const stem = base.replace(/\.(js|ts)$/, '');
    return [`${stem}.ts`, `${stem}.js`, `${base}/index.ts`].find((c) => this.sources.has(c));
  }

  /** Where `name`, as seen from `file`, is declared (following imports and re-exports). */
  declaration(file: string, name: string, depth = 0): { file: string; node: ts.Node } | undefined {
    const p = this.file(file);
    if (!p || depth > 5) return undefined;
    const local = p.declarations.get(name);
    if (local) return { file, node: local };
    const imp = p.imports.get(name);
    if (imp && imp.name !== '*') return this.declaration(imp.file, imp.name, depth + 1);
    return undefined;
  }

  site(file: string, node: ts.Node, name: string): Site {
    const sf = this.file(file)!.sf;
    return { file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, name };
  }

  /** Functions called inside `body` that are declared in other files or at the top of this one. */
  calls(file: string, body: ts.Node): Site[] {
    const p = this.file(file)!;
    const out = new Map<string, Site>();
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n)) {
        const callee = n.expression;
        let found: { file: string; node: ts.Node } | undefined;
        let label = '';
        if (ts.isIdentifier(callee)) {
          found = this.declaration(file, callee.text);
          label = callee.text;
        } else if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
          const ns = p.imports.get(callee.expression.text);
          if (ns?.name === '*') found = this.declaration(ns.file, callee.name.text);
          label = callee.getText(p.sf).replace(/\s+/g, '');
        } else if (ts.isPropertyAccessExpression(callee) && /^ctx\.stores\./.test(callee.getText(p.sf))) {
          label = callee.getText(p.sf).replace(/\s+/g, '');
          out.set(label, {
            file: '(ctx.stores: src/oidc/stores.ts, implemented in src/stores/)',
            line: 0,
            name: label,
          });
        }
        if (found && found.node !== body && !out.has(label))
          out.set(label, this.site(found.file, found.node, label));
      }
      ts.forEachChild(n, visit);
    };
    visit(body);
    return [...out.values()];
  }
}

/** The function node behind a declaration (a function, or a variable holding an arrow/function). */
function functionOf(node: ts.Node): ts.Node | undefined {
  if (ts.isFunctionDeclaration(node)) return node.body;
  if (ts.isVariableDeclaration(node) && node.initializer) {
    const i = node.initializer;
    if (ts.isArrowFunction(i) || ts.isFunctionExpression(i)) return i.body;
    return i;
  }
  return undefined;
}

interface Registration {
  file: string;
  call: ts.CallExpression;
  options: ts.ObjectLiteralExpression | undefined;
  handler: ts.Expression | undefined;
  operationId: RegExp | undefined;
}

function registrations(index: SourceIndex): Registration[] {
  const out: Registration[] = [];
  for (const file of index.sources.keys()) {
    const text = index.sources.get(file)!;
    if (!file.endsWith('.ts') || !/\.(get|post|put|patch|delete|route)\(/.test(text)) continue;
    const sf = index.file(file)!.sf;
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        const method = n.expression.name.text;
        const args = n.arguments;
        let options: ts.ObjectLiteralExpression | undefined;
        let handler: ts.Expression | undefined;
        if (method === 'route' && args.length === 1 && ts.isObjectLiteralExpression(args[0])) {
          options = args[0];
          handler = property(options, 'handler');
        } else if (HTTP_METHODS.has(method) && args.length >= 2) {
          options = args.length === 3 && ts.isObjectLiteralExpression(args[1]) ? args[1] : undefined;
          handler = args[args.length - 1];
        }
        const schema = options && property(options, 'schema');
        if (schema && ts.isObjectLiteralExpression(schema)) {
          out.push({ file, call: n, options, handler, operationId: operationIdPattern(schema) });
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

function property(obj: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of obj.properties) {
    if (p.name && ts.isIdentifier(p.name) && p.name.text === name) {
      if (ts.isPropertyAssignment(p)) return p.initializer;
      if (ts.isShorthandPropertyAssignment(p)) return p.name;
      if (ts.isMethodDeclaration(p)) return p as unknown as ts.Expression;
    }
  }
  return undefined;
}

/**
 * `...doc('createApp', …)` → /^createApp$/; `` `${decision}Device` `` → /^[A-Za-z]+Device$/;
 * `doc(get ? 'authorize' : 'authorizePost', …)` → /^(authorize|authorizePost)$/; a
 * conditional spread (`...(cond ? doc('getMe', …) : { hide: true })`) is searched too.
 */
function operationIdPattern(schema: ts.ObjectLiteralExpression): RegExp | undefined {
  let found: RegExp | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) && n.arguments[0]) {
      const first = n.arguments[0];
      if (ts.isStringLiteralLike(first)) found = new RegExp(`^${first.text}$`);
      else if (
        ts.isConditionalExpression(first) &&
        ts.isStringLiteralLike(first.whenTrue) &&
        ts.isStringLiteralLike(first.whenFalse)
      )
        found = new RegExp(`^(${first.whenTrue.text}|${first.whenFalse.text})$`);
      else if (ts.isTemplateExpression(first)) {
        const parts = [first.head.text, ...first.templateSpans.map((s) => s.literal.text)];
        found = new RegExp(`^${parts.map((s) => s.replace(/[^A-Za-z0-9]/g, '')).join('[A-Za-z]+')}$`);
      }
      return;
    }
    ts.forEachChild(n, visit);
  };
  for (const p of schema.properties) if (ts.isSpreadAssignment(p)) visit(p.expression);
  return found;
}

/** Traces one operation; the admin mirror (`adminX`) is traced to the registration of `x`. */
export function traceOperation(
  index: SourceIndex,
  regs: Registration[],
  op: Operation,
): RouteTrace | undefined {
  const id = op.operationId;
  const mirror = /^admin[A-Z]/.test(id) ? id.charAt(5).toLowerCase() + id.slice(6) : undefined;
  const reg =
    regs.find((r) => r.operationId?.test(id)) ??
    (mirror ? regs.find((r) => r.operationId?.test(mirror)) : undefined);
  if (!reg) return undefined;
  const schemas: RouteTrace['schemas'] = [];
  const schema = reg.options && property(reg.options, 'schema');
  if (schema && ts.isObjectLiteralExpression(schema)) {
    for (const part of ['params', 'querystring', 'body', 'response']) {
      const v = property(schema, part);
      if (!v) continue;
      const names = part === 'response' && ts.isObjectLiteralExpression(v) ? responseNames(v) : [v];
      for (const n of names) {
        const found = ts.isIdentifier(n) ? index.declaration(reg.file, n.text) : undefined;
        const label = ts.isIdentifier(n) ? n.text : n.getText(index.file(reg.file)!.sf);
        schemas.push({ part, site: found ? index.site(found.file, found.node, label) : label });
      }
    }
  }
  const handler: RouteTrace['handler'] = [];
  let body: ts.Node | undefined = reg.handler;
  if (body && ts.isIdentifier(body)) {
    const d = index.declaration(reg.file, body.text);
    body = d ? functionOf(d.node) : undefined;
  }
  if (body) {
    for (const callee of index.calls(reg.file, body)) {
      const d = callee.line ? index.declaration(callee.file, callee.name.split('.').pop()!) : undefined;
      const inner = d ? functionOf(d.node) : undefined;
      handler.push({ ...callee, calls: inner ? index.calls(d!.file, inner) : [] });
    }
  }
  return {
    operation: op,
    route: index.site(reg.file, reg.call, `${op.method} ${op.path}`),
    schemas,
    handler,
  };
}

function responseNames(obj: ts.ObjectLiteralExpression): ts.Expression[] {
  return obj.properties.flatMap((p) => (ts.isPropertyAssignment(p) ? [p.initializer] : []));
}

export function loadIndex(root: string) {
  const index = new SourceIndex(readSources(root));
  const document = JSON.parse(readFileSync(join(root, 'clients/typescript/openapi.json'), 'utf8'));
  return { index, regs: registrations(index), all: operations(document) };
}

const at = (s: Site) => (s.line ? `${s.file}:${s.line}` : s.file);

export function formatTrace(t: RouteTrace): string {
  const lines = [
    `${t.operation.method} ${t.operation.path}  (${t.operation.operationId})`,
    `  route     ${at(t.route)}`,
  ];
  for (const s of t.schemas) {
    lines.push(
      `  ${s.part.padEnd(9)} ${typeof s.site === 'string' ? s.site : `${s.site.name}  ${at(s.site)}`}`,
    );
  }
  for (const h of t.handler) {
    lines.push(`  calls     ${h.name}  ${at(h)}`);
    for (const c of h.calls) lines.push(`              ${c.name}  ${at(c)}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const query = process.argv.slice(2).join(' ');
  if (!query) {
    console.error(
      'usage: npm run route -- <operationId | /path | METHOD /path>   e.g. npm run route -- createApp',
    );
    process.exit(2);
  }
  const { index, regs, all } = loadIndex(join(dirname(fileURLToPath(import.meta.url)), '..'));
  const ops = findOperations(all, query);
  if (ops.length === 0) console.error(`no operation matches "${query}" in clients/typescript/openapi.json`);
  for (const op of ops.slice(0, 10)) {
    const t = traceOperation(index, regs, op);
    console.log(
      t ? formatTrace(t) : `${op.method} ${op.path} (${op.operationId}): registration not found`,
      '\n',
    );
  }
  if (ops.length > 10) console.log(`… and ${ops.length - 10} more: narrow the query`);
}
