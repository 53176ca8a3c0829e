import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { forbidden } from './errors.js';

/**
 * What a user API key needs to use a route: one of these scopes (an unscoped key has its user's full
 * access), or `access-token-only` (keys are refused: creating keys, linking sign-in methods, deleting
 * the account need a signed-in user's token).
 */
export type KeyScopeRule = readonly string[] | 'access-token-only';

/** The rule of a route by its method (the admin mirror needs admin.orgs.view to read, .edit to write). */
type RuleOf = (method: string) => KeyScopeRule;

const AUTHENTICATES = Symbol('authenticates');
const KEY_RULE = Symbol('keyScopeRule');

type Early = (req: FastifyRequest) => Promise<void>;
type Marked = { [AUTHENTICATES]?: Early; [KEY_RULE]?: RuleOf };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What an API key needs here, for a route whose guards do not say it (see `declareKeyScope`). */
    apiKeyScope?: KeyScopeRule;
    /** Set at registration from the route's guards or `apiKeyScope`; read by the check. */
    keyScopeRule?: KeyScopeRule;
  }
  interface FastifyInstance {
    /** Every route that authenticates, with what an API key needs there (tests walk it). */
    keyScopedRoutes: Array<{ method: string; url: string; rule: KeyScopeRule }>;
  }
}

/**
 * Marks the authenticate preHandler, so registration knows a route takes credentials. `early`
 * authenticates an API-key request before validation, so a key is refused (403) before its request
 * is examined any further.
 */
export function markAuthenticates<T extends object>(handler: T, early: Early): T {
  (handler as Marked)[AUTHENTICATES] = early;
  return handler;
}

/** Marks a guard as declaring what an API key needs on the routes that use it. */
export function declareKeyScope<T extends object>(handler: T, rule: KeyScopeRule | RuleOf): T {
  (handler as Marked)[KEY_RULE] = typeof rule === 'function' ? rule : () => rule;
  return handler;
}

/** Whether a key with `scopes` may use a route with `rule`. No scopes: the user's full access. */
export function keyMeets(scopes: readonly string[], rule: KeyScopeRule): boolean {
  if (rule === 'access-token-only') return false;
  if (scopes.length === 0 || scopes.includes('*')) return true;
  return rule.some((s) => scopes.includes(s));
}

/** Throws the 403 when the request's API key may not use the route (access tokens pass). */
export function enforceKeyScope(req: FastifyRequest): void {
  const p = req.principal;
  if (p?.kind !== 'api_key') return;
  // Registration always sets a rule on an authenticating route; a route without one refuses keys.
  const rule = req.routeOptions.config.keyScopeRule ?? 'access-token-only';
  if (keyMeets(p.scopes, rule)) return;
  if (rule === 'access-token-only')
    throw forbidden('access_token', 'this needs an access token from a sign-in, not an API key');
  throw forbidden(rule[0], 'the API key scopes do not allow this');
}

function handlersOf(route: RouteOptions): Marked[] {
  const h = route.preHandler;
  if (!h) return [];
  return (Array.isArray(h) ? h : [h]) as unknown as Marked[];
}

/**
 * Makes API-key scopes structural: every route that authenticates must declare what a key needs
 * (a guard made with `declareKeyScope`, or `config.apiKeyScope`), or the app refuses to start
 * naming the route. A request with an API key is authenticated before validation and refused (403)
 * when the rule does not allow its key, before any other guard, the body's validation or the handler. Install before any route is registered.
 */
export function installKeyScopes(app: FastifyInstance): void {
  app.decorate('keyScopedRoutes', []);
  app.addHook('onRoute', (route) => {
    const handlers = handlersOf(route);
    const early = handlers.find((h) => h[AUTHENTICATES])?.[AUTHENTICATES];
    if (!early) return;
    const methods = [route.method].flat();
    const ruleOf = handlers.find((h) => h[KEY_RULE])?.[KEY_RULE];
    const rules = methods.map((m) => ruleOf?.(m) ?? route.config?.apiKeyScope);
    const rule = rules[0];
    if (!rule || rules.some((r) => !r))
      throw new Error(
        `${methods.join(',')} ${route.url} authenticates but declares no API-key scope (declareKeyScope or config.apiKeyScope)`,
      );
    if (rules.some((r) => JSON.stringify(r) !== JSON.stringify(rule)))
      throw new Error(`${route.url}: one route per method when API-key scopes differ by method`);
    route.config = { ...route.config, keyScopeRule: rule };
    const before = route.preValidation ? [route.preValidation].flat() : [];
    route.preValidation = [early, ...before] as RouteOptions['preValidation'];
    for (const method of methods) app.keyScopedRoutes.push({ method, url: route.url, rule });
  });
}
