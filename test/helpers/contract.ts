import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The response contract: every response a test app sends is checked against the operation's schema
 * for that status in the app's own `/openapi.json`. A status the operation does not declare, a media
 * type it does not list or a body its schema refuses is a violation; `TestApp.close()` fails with the
 * list, so the whole suite checks the document, not a sample.
 */
export class ResponseContract {
  readonly violations: string[] = [];
  private doc: OpenApiDoc | undefined;
  private checker: DocChecker | undefined;

  /** Adds the onSend hook. Call before the app is ready. */
  install(app: FastifyInstance): void {
    app.addHook('onSend', (req, reply, payload, done) => {
      try {
        this.check(req, reply, payload);
      } catch (err) {
        this.violations.push(
          `${req.method} ${req.url}: the contract check failed: ${(err as Error).message}`,
        );
      }
      done(null, payload);
    });
  }

  /** Loads the document the app serves (after ready). */
  async load(app: FastifyInstance): Promise<void> {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    this.doc = JSON.parse(res.body) as OpenApiDoc;
    this.checker = checkerFor(res.body, this.doc);
  }

  private check(req: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    if (!this.doc || !this.checker) return;
    const url = req.routeOptions.url;
    if (!url || req.method === 'HEAD') return; // no route (a 404 of the router) or a HEAD twin
    // Plumbing routes a test adds name no operation (every app route does: test/openapi).
    if (!req.routeOptions.schema?.operationId) return;
    const path = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const op = this.doc.paths[path]?.[req.method.toLowerCase()];
    if (!op) return; // a hosted page, left out of the document on purpose
    const status = reply.statusCode;
    const where = `${req.method} ${path} → ${status} (${op.operationId})`;
    const declared = op.responses[String(status)] ? String(status) : 'default';
    const ref = op.responses[declared]?.$ref?.replace('#/components/responses/', '');
    const response = ref ? this.doc.components?.responses?.[ref] : op.responses[declared];
    const base = ref
      ? ['components', 'responses', ref]
      : ['paths', path, req.method.toLowerCase(), 'responses', declared];
    if (!response) {
      this.violations.push(`${where}: status not declared`);
      return;
    }
    if (status === 204 || status === 304) return; // Fastify sends no body with these, whatever the payload
    const body = bodyText(payload);
    if (body === undefined) return; // a stream (file downloads are Buffers; nothing streams JSON)
    if (!response.content) {
      if (body.length > 0)
        this.violations.push(`${where}: a body where none is declared: ${body.slice(0, 200)}`);
      return;
    }
    const type = String(reply.getHeader('content-type') ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const media = response.content[type];
    if (!media) {
      this.violations.push(
        `${where}: content-type ${type || '(none)'} not among ${Object.keys(response.content).join(', ')}`,
      );
      return;
    }
    if (!type.endsWith('json')) return;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      this.violations.push(`${where}: not JSON: ${body.slice(0, 200)}`);
      return;
    }
    const validate = this.checker.validator([...base, 'content', type, 'schema']);
    if (!validate(value)) {
      this.violations.push(
        `${where}: ${JSON.stringify(validate.errors?.slice(0, 5))} in ${body.slice(0, 400)}`,
      );
    }
  }

  /** Throws when any response broke the contract. */
  assertClean(): void {
    if (this.violations.length === 0) return;
    const list = this.violations.slice(0, 20).join('\n  ');
    throw new Error(`${this.violations.length} response(s) do not match /openapi.json:\n  ${list}`);
  }
}

interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, Response> };
}
interface Response {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  operationId: string;
  responses: Record<string, Response>;
}

function bodyText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** One Ajv per distinct document (every test app of a run serves the same one): compiled lazily. */
class DocChecker {
  private readonly ajv: Ajv2020Module.default;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: OpenApiDoc) {
    this.ajv = new Ajv2020Module.default({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(doc as object, 'openapi');
  }

  /** The validator of the schema at `path` in the document (its `$ref`s resolve there too). */
  validator(path: string[]): ValidateFunction {
    const pointer = path.map(escapePointer).join('/');
    const known = this.compiled.get(pointer);
    if (known) return known;
    const v = this.ajv.compile({ $ref: `openapi#/${pointer}` });
    this.compiled.set(pointer, v);
    return v;
  }
}

const checkers = new Map<string, DocChecker>();
function checkerFor(text: string, doc: OpenApiDoc): DocChecker {
  const key = createHash('sha256').update(text).digest('hex');
  let c = checkers.get(key);
  if (!c) {
    c = new DocChecker(doc);
    checkers.set(key, c);
  }
  return c;
}
