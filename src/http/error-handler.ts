import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isBadValueError } from '../db/errors.js';
import { declaredPattern, SAFE_TEXT_PATTERN } from './input-rules.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { ApiError, type FieldError, OAuthError } from './errors.js';

const KEYWORD_CODES: Record<string, string> = {
  required: 'required',
  minLength: 'too_short',
  maxLength: 'too_long',
  pattern: 'invalid_format',
  format: 'invalid_format',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  anyOf: 'invalid_value',
  oneOf: 'invalid_value',
  additionalProperties: 'unknown_field',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minItems: 'too_few',
  maxItems: 'too_many',
  uniqueItems: 'duplicate',
  minProperties: 'required',
};

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** The pattern a field must match, as its route declared it (without the input rule's NUL guard). */
function patternMessage(pattern: string): string {
  if (pattern === SAFE_TEXT_PATTERN) return 'must not contain a NUL character or an unpaired surrogate';
  return `must match pattern "${declaredPattern(pattern)}" and not contain a NUL character or an unpaired surrogate`;
}

/** AJV issues → `details.fields`. A path `/config/clientId` becomes `config.clientId`. */
export function fieldErrors(issues: AjvIssue[], context?: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const i of issues) {
    // anyOf/oneOf repeat their branch failures; keep the summary line only.
    if (i.keyword === 'if') continue;
    let path = i.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (i.keyword === 'required')
      path = path ? `${path}.${i.params.missingProperty}` : String(i.params.missingProperty);
    if (i.keyword === 'additionalProperties')
      path = path ? `${path}.${i.params.additionalProperty}` : String(i.params.additionalProperty);
    if (!path) path = context ?? 'body';
    const code = KEYWORD_CODES[i.keyword] ?? 'invalid';
    const key = `${path}:${code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const message =
      i.keyword === 'additionalProperties'
        ? 'unknown or read-only field'
        : i.keyword === 'required'
          ? 'is required'
          : i.keyword === 'pattern'
            ? patternMessage(String(i.params.pattern))
            : (i.message ?? 'is invalid');
    out.push({ field: path, code, message });
  }
  return out;
}

/** Routes under /oauth2/ answer in the OAuth envelope; everything else in the REST envelope. */
export function usesOAuthEnvelope(req: FastifyRequest): boolean {
  return req.url.startsWith('/oauth2/');
}

declare module 'fastify' {
  interface FastifyReply {
    /** The error code sent (REST `error.code` or OAuth `error`), for the request's log line. */
    errorCode: string | null;
  }
}

function sendOAuth(reply: FastifyReply, err: OAuthError) {
  reply.errorCode = err.error;
  if (err.headers) reply.headers(err.headers);
  reply.header('cache-control', 'no-store');
  const body = { error: err.error, error_description: err.description };
  return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

function sendRest(reply: FastifyReply, err: ApiError) {
  reply.errorCode = err.code;
  if (err.headers) reply.headers(err.headers);
  const body: { error: { code: string; message: string; details?: Record<string, unknown> } } = {
    error: { code: err.code, message: err.message },
  };
  if (err.details) body.error.details = err.details;
  // Sent as JSON text: a route's schema for this status may describe a page (HTML, a string), and
  // its serializer would turn the envelope into "[object Object]".
  return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** Maps Fastify's own errors (parsing, content type, size) to a clean 4xx. */
function fromFastifyError(err: FastifyError): ApiError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'the request body is not valid JSON', {
        fields: [{ field: 'body', code: 'invalid_json', message: 'the body is not valid JSON' }],
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(415, 'unsupported_media_type', 'this content type is not accepted here');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'the request body is too large');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ApiError(400, 'bad_request', 'malformed request');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, err.statusCode === 404 ? 'not_found' : 'bad_request', 'bad request');
  }
  return null;
}

/**
 * Errors the router raises before any route runs (a path parameter over `maxParamLength`, a path
 * that is not valid percent-encoded UTF-8): the same envelopes as every other error, not Fastify's.
 */
export function frameworkErrorHandler(error: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const err = fromFastifyError(error) ?? new ApiError(400, 'bad_request', 'malformed request');
  if (req.url.startsWith('/oauth2/')) return sendOAuth(reply, new OAuthError('invalid_request', err.message));
  return sendRest(reply, err);
}

export function installErrorHandling(
  app: FastifyInstance,
  opts: { onNotFound?: (req: FastifyRequest, reply: FastifyReply) => void } = {},
): void {
  app.decorateReply('errorCode', null);
  app.setErrorHandler((error: FastifyError & { validationContext?: string }, req, reply) => {
    const oauth = usesOAuthEnvelope(req);
    if (error instanceof OAuthError) {
      if (oauth) return sendOAuth(reply, error);
      return sendRest(reply, new ApiError(error.status, error.error, error.description));
    }
    let apiErr: ApiError | null = error instanceof ApiError ? error : null;
    if (!apiErr && error.validation) {
      const fields = fieldErrors(error.validation as AjvIssue[], error.validationContext);
      if (oauth) {
        const first = fields[0];
        return sendOAuth(
          reply,
          new OAuthError('invalid_request', `${first?.field ?? 'request'} ${first?.message ?? 'is invalid'}`),
        );
      }
      apiErr = new ApiError(400, 'validation_failed', 'request validation failed', { fields });
    }
    if (!apiErr) apiErr = fromFastifyError(error);
    if (!apiErr && isBadValueError(error)) {
      // A value the schema rule should have refused: the caller's mistake, but worth a warning.
      req.log.warn({ sqlState: error.code, route: req.routeOptions.url }, 'database refused a request value');
      apiErr = new ApiError(400, 'validation_failed', 'a value in the request cannot be stored', {
        fields: [
          { field: 'request', code: 'invalid_value', message: 'a value is out of range or malformed' },
        ],
      });
    }
    if (!apiErr && isDatabaseUnavailable(error)) {
      req.log.warn({ err: error }, 'database unavailable');
      apiErr = new ApiError(
        503,
        'service_unavailable',
        'the database is unavailable; retry shortly',
        undefined,
        {
          'retry-after': '1',
        },
      );
    }
    if (!apiErr) {
      req.log.error({ err: error }, 'unhandled error');
      if (oauth) return sendOAuth(reply, new OAuthError('server_error', 'internal error', 500));
      return sendRest(
        reply,
        new ApiError(500, 'internal_error', 'internal error; safe to retry with backoff'),
      );
    }
    if (oauth && apiErr.status === 503) {
      return sendOAuth(reply, new OAuthError('temporarily_unavailable', apiErr.message, 503, apiErr.headers));
    }
    if (oauth && apiErr.status !== 429) {
      const code = apiErr.status >= 500 ? 'server_error' : 'invalid_request';
      return sendOAuth(
        reply,
        new OAuthError(code, apiErr.message, apiErr.status >= 500 ? 500 : 400, apiErr.headers),
      );
    }
    if (oauth) {
      return sendOAuth(reply, new OAuthError('rate_limited', apiErr.message, 429, apiErr.headers));
    }
    return sendRest(reply, apiErr);
  });

  app.setNotFoundHandler((req, reply) => {
    const sent = sendRest(
      reply,
      new ApiError(404, 'not_found', `no route for ${req.method} ${req.url.split('?')[0]}`),
    );
    opts.onNotFound?.(req, reply);
    return sent;
  });
}
