import { STATUS_CODES } from 'node:http';
import type { FastifySchema } from 'fastify';
import { type GuardDoc, guardDocs } from '../http/route-doc.js';
import { LOCAL_REF } from '../http/input-rules.js';
import { rateLimits } from '../config/defaults.js';
import { componentNames, ERROR_COMPONENTS } from './components.js';

/** A route as `onRoute` saw it: the parts the document is built from. */
export interface RouteRecord {
  method: string;
  url: string;
  schema?: FastifySchema;
  preHandler?: unknown;
}

type Json = Record<string, unknown>;

export const SECURITY_SCHEMES = {
  consoleToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A console access token: an access token with audience `console`, from signing in with the `console` app (authorization code + PKCE).',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      'A user API key (`ghsk_…`, made with `POST /users/me/api-keys`) sent as `Authorization: Bearer ghsk_…`. A key with scopes may use only what they allow.',
  },
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An access token this issuer gave an app (any brand audience), with the `openid` scope.',
  },
  clientBasic: {
    type: 'http',
    scheme: 'basic',
    description:
      "Client authentication: HTTP Basic with the app's `client_id` and `client_secret` (client_secret_basic), or the form fields `client_id` + `client_secret` (client_secret_post), or `client_id` alone for public apps.",
  },
} as const;

/** The REST error codes each status can carry (the code in `error.code`). */
const REST_CODES: Record<number, string> = {
  400: '`validation_failed` (with `details.fields`) or a request-specific code',
  401: '`unauthorized` (no credentials) or `invalid_token`',
  403: '`forbidden` (with `details.missing`)',
  404: "`not_found` (also for another org's resources)",
  409: '`conflict`',
  413: '`payload_too_large`',
  415: '`unsupported_media_type`',
  422: '`unprocessable_entity` or `validation_failed`',
  429: '`rate_limited` (with `Retry-After`)',
  500: '`internal_error`',
  503: '`service_unavailable`',
};

const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * Converts route schemas to OpenAPI schemas: a schema that is one of the named components becomes a
 * `$ref` (found by identity, so a route that uses `App` refers to `#/components/schemas/App`); `$id`
 * is dropped (components are named by the document, not by the validator's ids). A request schema's
 * `$defs` (src/http/input-rules.ts lets a body refer to them) become components under their own
 * names: in the document `#/$defs/…` would resolve against the document's root, not the schema's.
 */
class SchemaConverter {
  /** The `$defs` met so far, converted, by name. */
  readonly hoisted = new Map<string, Json>();
  private readonly taken: Set<string>;

  constructor(private readonly names: Map<object, string>) {
    this.taken = new Set(names.values());
  }

  convert(node: unknown, root = false): unknown {
    if (Array.isArray(node)) return node.map((n) => this.convert(n));
    if (!node || typeof node !== 'object') return node;
    const name = this.names.get(node);
    if (name && !root) return { $ref: `#/components/schemas/${name}` };
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$id') continue;
      if (k === '$defs' && isObject(v)) {
        for (const [def, schema] of Object.entries(v)) this.hoist(def, schema);
        continue;
      }
      const local = k === '$ref' && typeof v === 'string' ? LOCAL_REF.exec(v) : null;
      out[k] = local ? `#/components/schemas/${local[1]}` : this.convert(v);
    }
    return out;
  }

  private hoist(name: string, schema: unknown): void {
    if (this.taken.has(name)) throw new Error(`a request schema's $defs/${name} takes a component's name`);
    const converted = this.convert(schema, true) as Json;
    const before = this.hoisted.get(name);
    if (before && JSON.stringify(before) !== JSON.stringify(converted))
      throw new Error(`two request schemas define $defs/${name} differently`);
    this.hoisted.set(name, converted);
  }
}

function isObject(v: unknown): v is Json {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** `in: path|query` parameters from a params or querystring object schema. */
function parameters(where: 'path' | 'query', schema: unknown, conv: SchemaConverter): Json[] {
  if (!isObject(schema)) return [];
  const props = schema.properties;
  if (!isObject(props)) {
    // A free-form query (the authorize endpoint parses its raw query itself).
    return [{ name: 'params', in: where, style: 'form', explode: true, schema: conv.convert(schema) }];
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, s]) => {
    const p: Json = { name, in: where, required: where === 'path' || required.has(name) };
    const converted = conv.convert(s) as Json;
    if (typeof converted.description === 'string') p.description = converted.description;
    p.schema = converted;
    return p;
  });
}

/** How one response status is sent: no body, JSON, HTML/text, or the route's own media types. */
function responseContent(schema: unknown, conv: SchemaConverter): Json | undefined {
  if (!isObject(schema)) return undefined;
  if (isObject(schema.content)) {
    return Object.fromEntries(
      Object.entries(schema.content).map(([type, v]) => [type, { schema: conv.convert((v as Json).schema) }]),
    );
  }
  if (schema.type === 'null') return undefined;
  if (schema.type === 'string')
    return schema.maxLength === 0 ? undefined : { 'text/html': { schema: conv.convert(schema) } };
  const union = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]) : undefined;
  if (union?.some((s) => s.type === 'string')) {
    const json = union.filter((s) => s.type !== 'string');
    return {
      'application/json': { schema: conv.convert(json.length === 1 ? json[0] : { anyOf: json }) },
      'text/html': { schema: { type: 'string' } },
    };
  }
  return { 'application/json': { schema: conv.convert(schema) } };
}

/** The error envelope a route answers with: the OAuth one on the OAuth endpoints, else the REST one. */
function errorEnvelope(responses: Json): 'OAuthError' | 'ErrorEnvelope' {
  for (const [status, s] of Object.entries(responses))
    if (Number(status) >= 400 && s === ERROR_COMPONENTS.OAuthError) return 'OAuthError';
  return 'ErrorEnvelope';
}

function security(schema: FastifySchema, guards: GuardDoc[]): Json[] {
  if (guards.some((g) => g.kind === 'accessTokenOnly')) return [{ consoleToken: [] }];
  if (guards.some((g) => g.kind === 'bearer') || schema.auth === 'bearer')
    return [{ consoleToken: [] }, { apiKey: [] }];
  if (schema.auth === 'client') return [{ clientBasic: [] }, {}];
  if (schema.auth === 'accessToken') return [{ accessToken: [] }];
  return [];
}

function describeLimit(name: string, points: number, duration: number): string {
  const per = duration === 60 ? 'minute' : duration === 3600 ? 'hour' : `${duration} s`;
  return `${points} per ${per} (\`${name}\`)`;
}

/** The interface's rules for an operation, from its guards, its declared statuses and its own text. */
function description(method: string, schema: FastifySchema, guards: GuardDoc[], statuses: number[]): string {
  const lines: string[] = [];
  if (schema.description) lines.push(schema.description.trim(), '');
  const write = method !== 'GET';
  for (const g of guards) {
    if (g.kind === 'bearer') lines.push('- **Credentials:** a console access token or a user API key.');
    if (g.kind === 'accessTokenOnly')
      lines.push(
        '- **Credentials:** a console access token only; an API key is refused with 403 `forbidden`.',
      );
    if (g.kind === 'orgPermission')
      lines.push(
        g.admin
          ? `- **Permission:** the system permission \`${write ? 'admin.orgs.edit' : 'admin.orgs.view'}\` (no membership needed).`
          : `- **Permission:** \`${g.permission}\` in the org (a non-member gets 404; a scoped API key needs it among its scopes).`,
      );
    if (g.kind === 'systemPermission')
      lines.push(`- **Permission:** the system permission \`${g.permission}\`.`);
    if (g.kind === 'keyScope') lines.push(`- **API key scope:** \`${g.scope}\` when the key has scopes.`);
    if (g.kind === 'rateLimit')
      lines.push(`- **Rate limit:** ${describeLimit(g.name, g.points, g.duration)}.`);
  }
  for (const name of schema.rateLimits ?? []) {
    const spec = rateLimits[name];
    lines.push(`- **Rate limit:** ${describeLimit(name, spec.points, spec.duration)}.`);
  }
  const errors = statuses.filter((s) => s >= 400 && s !== 500);
  if (errors.length) lines.push(`- **Errors:** ${errors.join(', ')} (see the responses).`);
  return lines.join('\n').trim();
}

function errorResponseDescription(status: number, envelope: string): string {
  const phrase = STATUS_CODES[status] ?? 'Error';
  if (envelope === 'OAuthError') return `${phrase}: an OAuth error (\`error\`, \`error_description\`).`;
  const codes = REST_CODES[status];
  return codes ? `${phrase}: ${codes}.` : phrase;
}

export interface DocumentInfo {
  version: string;
  baseUrl: string;
}

/**
 * Whether a route is described: hosted HTML pages, HEAD twins and CORS preflights (src/http/cors.ts,
 * answered for a described route's URL) are not.
 */
export function isDocumented(route: RouteRecord): boolean {
  return route.method !== 'HEAD' && route.method !== 'OPTIONS' && !route.schema?.hide;
}

/** The OpenAPI 3.1 document of `routes`. Pure: the same routes give the same document. */
export function buildDocument(routes: RouteRecord[], info: DocumentInfo): Json {
  const names = componentNames();
  const conv = new SchemaConverter(names);
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  const sharedResponses: Record<string, Json> = {};

  for (const route of routes) {
    if (!isDocumented(route)) continue;
    const op = operation(route, conv, sharedResponses);
    for (const t of op.tags as string[]) tags.add(t);
    const path = toOpenApiPath(route.url);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = op;
  }

  const sortedPaths = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((p) => [p, paths[p]]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse API',
      version: info.version,
      description:
        'Gatehouse: an OpenID Connect issuer with orgs, brands, apps, wallets, API keys, token gates, webhooks and an audit log. REST errors are `{ "error": { "code", "message", "details" } }`; the OAuth endpoints answer `{ "error", "error_description" }`.',
      // Only `servers` names this deployment: the rest is the same everywhere (the client ships it).
      contact: { name: 'Gatehouse' },
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: info.baseUrl }],
    tags: [...tags].sort().map((name) => ({ name, description: `${name} operations.` })),
    paths: sortedPaths,
    components: {
      schemas: reachedSchemas(names, conv, [paths, sharedResponses]),
      responses: Object.fromEntries(
        Object.keys(sharedResponses)
          .sort()
          .map((k) => [k, sharedResponses[k]]),
      ),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** One route's operation object; envelope-only error responses are added to `sharedResponses`. */
function operation(route: RouteRecord, conv: SchemaConverter, sharedResponses: Record<string, Json>): Json {
  const schema: FastifySchema = route.schema ?? {};
  const guards = guardDocs(route.preHandler);
  const declared = (isObject(schema.response) ? schema.response : {}) as Json;
  const statuses = [...new Set([...Object.keys(declared).map(Number), 500])].sort((a, b) => a - b);
  const responses = operationResponses(declared, statuses, conv, sharedResponses);

  const op: Json = {
    operationId: schema.operationId ?? fallbackOperationId(route),
    summary: schema.summary ?? `${route.method} ${route.url}`,
    description: description(route.method, schema, guards, statuses),
    tags: schema.tags ?? ['Undocumented'],
    security: security(schema, guards),
  };
  const params = [
    ...parameters('path', schema.params, conv),
    ...parameters('query', schema.docQuery ?? schema.querystring, conv),
  ];
  if (params.length) op.parameters = params;
  const body = schema.docBody ?? schema.body;
  if (body) {
    const types = schema.consumes ?? ['application/json'];
    op.requestBody = {
      required: true,
      content: Object.fromEntries(types.map((t) => [t, { schema: conv.convert(body) }])),
    };
  }
  op.responses = responses;
  return op;
}

/** The responses of an operation, by status (every operation also documents 500). */
function operationResponses(
  declared: Json,
  statuses: number[],
  conv: SchemaConverter,
  sharedResponses: Record<string, Json>,
): Json {
  const envelope = errorEnvelope(declared);
  const responses: Json = {};
  for (const status of statuses) {
    const given = declared[status];
    if (
      status >= 400 &&
      (given === undefined ||
        given === ERROR_COMPONENTS[envelope === 'OAuthError' ? 'OAuthError' : 'ErrorEnvelope'])
    ) {
      // The envelope alone: one shared response per envelope and status.
      const name = `${envelope === 'OAuthError' ? 'OAuthError' : 'Error'}${status}`;
      sharedResponses[name] ??= {
        description: errorResponseDescription(status, envelope),
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${envelope}` } } },
      };
      responses[String(status)] = { $ref: `#/components/responses/${name}` };
      continue;
    }
    const s = given ?? { $ref: `#/components/schemas/${envelope}` };
    const content =
      status === 500 && !declared[status] ? { 'application/json': { schema: s } } : responseContent(s, conv);
    const isError = status >= 400;
    const desc =
      (isObject(s) && typeof s.description === 'string' && s.description) ||
      (isError ? errorResponseDescription(status, envelope) : (STATUS_CODES[status] ?? 'Response'));
    responses[String(status)] = content ? { description: desc, content } : { description: desc };
  }
  return responses;
}

/** Components the operations reach (a module may export a schema only its own schemas embed), by name. */
function reachedSchemas(names: Map<object, string>, conv: SchemaConverter, roots: unknown[]): Json {
  const byName = new Map([...names.entries()].map(([schema, name]) => [name, schema]));
  // Converted when reached, not before: converting a component hoists its `$defs`.
  const converted = new Map<string, unknown>();
  const component = (name: string): unknown => {
    if (!converted.has(name))
      converted.set(name, conv.hoisted.get(name) ?? conv.convert(byName.get(name), true));
    return converted.get(name);
  };
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!isObject(node)) return;
    const ref = typeof node.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(node.$ref) : null;
    if (ref && !reached.has(ref[1])) {
      reached.add(ref[1]);
      visit(component(ref[1]));
    }
    for (const v of Object.values(node)) visit(v);
  };
  for (const root of roots) visit(root);
  const schemas: Json = {};
  for (const name of [...reached].sort()) schemas[name] = component(name);
  return schemas;
}

/** A stable id for a route that has not named one (the contract test refuses such routes). */
function fallbackOperationId(route: RouteRecord): string {
  const words = route.url
    .replace(/[:{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `${route.method.toLowerCase()}${words.join('')}`;
}
