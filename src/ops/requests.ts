import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onResponseHookHandler,
} from 'fastify';
import type { AppContext } from '../context.js';

/** Probes and scrapes: neither logged nor counted (a load balancer polls them every few seconds). */
const UNOBSERVED = new Set(['/healthz', '/readyz', '/metrics']);

type Observe = (req: FastifyRequest, reply: FastifyReply) => void;

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

  const observer = (routeUrl: string | undefined): Observe => {
    let metrics: ReturnType<typeof ctx.metrics.route> | undefined;
    return (req, reply) => {
      const status = reply.statusCode;
      const ms = reply.elapsedTime;
      if (!metrics) {
        // Read once per route, on its first request: another plugin's onRoute hook may still have
        // added the operationId after this one ran.
        const schema = routeUrl
          ? (req.routeOptions.schema as { operationId?: string } | undefined)
          : undefined;
        metrics = ctx.metrics.route(
          routeUrl ? (schema?.operationId ?? `${req.method} ${routeUrl}`) : 'no_route',
        );
      }
      metrics.observe(status, ms / 1000);
      if (status >= 400 ? logErrors : logAll) {
        const line = {
          reqId: req.id,
          method: req.method,
          route: routeUrl ?? null,
          status,
          ms: Math.round(ms * 10) / 10,
          errorCode: status >= 400 ? (reply.errorCode ?? null) : undefined,
        };
        if (status >= 500) log?.error(line, 'request');
        else log?.info(line, 'request');
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
