import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onResponseHookHandler,
} from 'fastify';
import { hostname } from 'node:os';
import pino from 'pino';
import type { AppContext } from '../context.js';

/** Probes and scrapes: neither logged nor counted (a load balancer polls them every few seconds). */
const UNOBSERVED = new Set(['/healthz', '/readyz', '/metrics']);

type Observe = (req: FastifyRequest, reply: FastifyReply) => void;

/**
 * Writes the request lines straight to the logger's destination, in pino's JSON format: the route's
 * part of the line is serialised once, so a request costs one string and one buffered write (pino's
 * generic path, with redaction and serialisers, cost a third of a cached discovery reply). Every
 * field is a number, a route template from this code base, the method, or our own request id; the
 * method of an unrouted request and the error code are escaped.
 */
interface Destination {
  write(s: string): void;
  flushSync?: () => void;
}

/**
 * The lines of one event-loop turn handed to pino's asynchronous destination (SonicBoom) in one
 * write. SonicBoom measures the UTF-8 length of its whole pending buffer on every write, so one
 * write per request under load cost a tenth of a cached gate check's CPU; a turn's lines in one
 * write cost that once. Nothing is held past the turn (setImmediate), and what is pending when the
 * process exits is written synchronously. A destination without `flushSync` (a test's stream)
 * gets each line at once, as before.
 */
function coalescing(stream: Destination): { emit: (line: string) => void; close: () => void } {
  const flushSync = stream.flushSync;
  if (typeof flushSync !== 'function') return { emit: (line) => stream.write(line), close: () => {} };
  let pending = '';
  const flush = () => {
    const out = pending;
    pending = '';
    if (out) stream.write(out);
  };
  const onExit = () => {
    if (!pending) return;
    flush();
    try {
      flushSync.call(stream);
    } catch {
      // Exiting anyway: a destination that cannot write now loses the last lines, as pino's own would.
    }
  };
  process.once('exit', onExit);
  return {
    emit: (line) => {
      if (!pending) setImmediate(flush);
      pending += line;
    },
    // The app closed: its pending lines go now, and the process keeps no listener per closed app.
    close: () => {
      flush();
      process.removeListener('exit', onExit);
    },
  };
}

function lineWriter(log: FastifyBaseLogger) {
  const stream = (log as unknown as Record<symbol, Destination>)[pino.symbols.streamSym];
  const { emit, close } = coalescing(stream);
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  return {
    close,
    /** The constant part of a route's lines. */
    head: (method: string, route: string | null) =>
      `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`,
    write(req: FastifyRequest, head: string, status: number, ms: number, errorCode: string | null) {
      const level = status >= 500 ? 50 : 30;
      if (level < (log as unknown as { levelVal: number }).levelVal) return;
      emit(
        `{"level":${level},"time":${Date.now()}${base},"reqId":${JSON.stringify(req.id)}${head},"status":${status},"ms":${Math.round(ms * 10) / 10}${
          status >= 400 ? `,"errorCode":${JSON.stringify(errorCode)}` : ''
        },"msg":"request"}\n`,
      );
    },
  };
}

/**
 * One log line and one histogram observation per request, by route. The hook is attached to each
 * route as it is registered (not one global hook), so health probes cost nothing and the route's
 * labels are worked out once: its OpenAPI `operationId`, or `METHOD /route/template` without one.
 *
 * The line (`msg: "request"`) has the method, route template (never the raw URL: ids and query
 * strings stay out), status, duration in ms, request id, and `errorCode` for 4xx/5xx. LOG_REQUESTS
 * picks which requests get one: `all`, `errors` (status ≥ 400) or `off`.
 *
 * Returns the observer for requests no route matched (the 404 handler calls it).
 */
export function instrumentRequests(
  app: FastifyInstance,
  ctx: AppContext,
  log: FastifyBaseLogger | null,
): Observe {
  const mode = ctx.config.logRequests;
  const logAll = log !== null && mode === 'all';
  const logErrors = log !== null && mode !== 'off';

  const writer = log ? lineWriter(log) : null;
  if (writer) app.addHook('onClose', async () => writer.close());
  // Without METRICS_PORT nobody reads the request histogram: skip it.
  const measure = ctx.config.metricsPort !== undefined;

  const observer = (routeUrl: string | undefined): Observe => {
    let metrics: ReturnType<typeof ctx.metrics.route> | undefined;
    let head: string | undefined;
    let headMethod: string | undefined;
    return (req, reply) => {
      const status = reply.statusCode;
      const ms = reply.elapsedTime;
      if (measure && !metrics) {
        // Read once per route, on its first request: another plugin's onRoute hook may still have
        // added the operationId after this one ran.
        const schema = routeUrl
          ? (req.routeOptions.schema as { operationId?: string } | undefined)
          : undefined;
        metrics = ctx.metrics.route(
          routeUrl ? (schema?.operationId ?? `${req.method} ${routeUrl}`) : 'no_route',
        );
      }
      if (metrics) metrics.observe(status, ms / 1000);
      if (writer && (status >= 400 ? logErrors : logAll)) {
        // Kept per route (a route may answer several methods); an unrouted request's method can be anything.
        if (!routeUrl) writer.write(req, writer.head(req.method, null), status, ms, reply.errorCode);
        else {
          if (headMethod !== req.method) {
            headMethod = req.method;
            head = writer.head(req.method, routeUrl);
          }
          writer.write(req, head as string, status, ms, reply.errorCode);
        }
      }
    };
  };

  app.addHook('onRoute', (route) => {
    if (UNOBSERVED.has(route.url)) return;
    const observe = observer(route.url);
    const hook: onResponseHookHandler = (req, reply, done) => {
      observe(req, reply);
      done();
    };
    const existing = route.onResponse;
    route.onResponse = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
  });

  return observer(undefined);
}
