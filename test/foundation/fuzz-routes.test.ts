import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type RouteInputs, registeredRoutes } from '../../src/http/input-rules.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, grantSystem, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { createApp, createBrand } from '../helpers/oidc.js';
import {
  asField,
  deeplyNested,
  encodeSegment,
  fuzzArb,
  PROTO_KEY,
  toJson,
  validArb,
} from '../helpers/schema-arbitrary.js';
import { FakeSolanaRpc } from '../token-gates/fake-rpc.js';

/**
 * Issue 14: every registered route, fed bodies, queries and path params generated from its own
 * schema (valid, boundary and hostile values), answers without a 5xx it does not declare and in
 * the right envelope: REST `{ error: { code, message } }`, OAuth `{ error, error_description }`
 * under /oauth2/. Reproduce a failure with the printed seed: FUZZ_SEED=<seed> npm test -- fuzz-routes.
 * FUZZ_RUNS sets the requests per route.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);

/** Routes left out, with why: each is covered by its own tests. */
const SKIPPED: Record<string, string> = {
  // Sends an HTTP request to the subscription's URL at once: a fuzzed URL would leave loopback.
  'POST /identity/organizations/:orgSlug/webhooks/:id/test': 'outbound request',
  'POST /admin/identity/organizations/:orgSlug/webhooks/:id/test': 'outbound request',
};

interface FuzzRequest {
  params: Record<string, unknown>;
  query?: unknown;
  body?: unknown;
  /** How the body is sent: JSON, a form, or a raw payload (broken or deeply nested JSON). */
  encoding: 'json' | 'form' | 'raw';
  raw?: string;
  authenticated: boolean;
}

const RAW_BODIES = [
  deeplyNested(5000),
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
  '{"a":',
  '\u0000',
  'null',
  '[]',
  '"text"',
  '1e999999',
  '{"name":"\\ud800"}',
];

describe(`fuzz: every route, from its own schema (seed ${SEED})`, () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  const logLines: string[] = [];
  /** Real values for path params, so requests reach past "not found" into the handlers. */
  const known: Record<string, string[]> = {};

  before(async () => {
    rpc = new FakeSolanaRpc();
    await rpc.start();
    t = await buildTestApp({
      env: { SOLANA_RPC_URL: rpc.url, RATE_LIMIT_MULTIPLIER: '1000', LOG_LEVEL: 'warn' },
      logStream: { write: (line: string) => void logLines.push(line) },
    });
    await webhookWorker(t.ctx).stop();
    owner = await createUser(t);
    await grantSystem(t, owner.id, ['admin.orgs.view', 'admin.orgs.edit', 'admin.users.view']);
    org = await seedOrg(t, owner);
    const brand = await createBrand(t, { orgId: org.id });
    const app = await createApp(t, brand);
    const post = async (url: string, payload: unknown) => {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: owner.auth,
        payload: payload as object,
      });
      assert.ok(res.statusCode < 300, `${url}: ${res.body}`);
      return json(res);
    };
    const base = `/identity/organizations/${org.slug}`;
    const gate = await post(`${base}/token-gates`, {
      name: 'Gate',
      mintAddress: rpc.addMint(),
      minHoldings: '1',
    });
    const hook = await post(`${base}/webhooks`, { url: 'https://hooks.example/in', events: ['*'] });
    const key = await post('/users/me/api-keys', { name: 'fuzz key' });
    Object.assign(known, {
      orgSlug: [org.slug],
      brandSlug: [brand.slug],
      clientId: [app.clientId],
      appId: [app.appId],
      gateId: [gate.id],
      id: [hook.id, key.id, owner.id],
      userId: [owner.id],
      roleId: Object.values(org.roles),
    });
  });
  after(async () => {
    await t?.close();
    await rpc?.stop();
  });

  /** One request for `route`: schema-shaped parts, real ids half the time, any part may be hostile. */
  function requestArb(route: RouteInputs): fc.Arbitrary<FuzzRequest> {
    const paramsSchema = route.schema.params as { properties?: Record<string, unknown> } | undefined;
    const params = fc.record(
      Object.fromEntries(
        Object.entries(paramsSchema?.properties ?? {}).map(([name, s]) => {
          const real = known[name];
          const generated = fc.oneof({ weight: 3, arbitrary: validArb(s) }, fuzzArb(s));
          return [
            name,
            real ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...real) }, generated) : generated,
          ];
        }),
      ),
    );
    const query = route.schema.querystring ? fuzzArb(route.schema.querystring) : fc.constant(undefined);
    const body = route.schema.body ? fuzzArb(route.schema.body) : fc.constant(undefined);
    return fc.record({
      params,
      query,
      body,
      encoding: fc.constantFrom<FuzzRequest['encoding']>('json', 'json', 'json', 'form', 'raw'),
      raw: fc.constantFrom(...RAW_BODIES),
      authenticated: fc.nat(9).map((n) => n > 0),
    });
  }

  function injectOptions(method: string, route: RouteInputs, r: FuzzRequest) {
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
      encodeSegment(asField(r.params[name])),
    );
    const qs = new URLSearchParams();
    if (r.query && typeof r.query === 'object' && !Array.isArray(r.query)) {
      for (const [k, v] of Object.entries(r.query)) {
        const key = k === PROTO_KEY ? '__proto__' : k;
        for (const item of Array.isArray(v) ? v : [v]) qs.append(key, asField(item));
      }
    }
    const url = qs.size ? `${path}?${qs}` : path;
    const headers: Record<string, string> = r.authenticated ? { ...owner.auth } : {};
    const hasBody =
      !['GET', 'HEAD'].includes(method) && (route.schema.body !== undefined || r.encoding === 'raw');
    if (!hasBody) return { method, url, headers } as const;
    if (r.encoding === 'raw' || r.body === undefined)
      return {
        method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: r.raw,
      } as const;
    if (r.encoding === 'form' && r.body && typeof r.body === 'object' && !Array.isArray(r.body)) {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(r.body))
        for (const item of Array.isArray(v) ? v : [v])
          form.append(k === PROTO_KEY ? '__proto__' : k, asField(item));
      return {
        method,
        url,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: form.toString(),
      } as const;
    }
    return {
      method,
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: toJson(r.body),
    } as const;
  }

  /** A request for the failure report, the console token left out. */
  const describe = (opts: { headers: Record<string, string> }) =>
    JSON.stringify({
      ...opts,
      headers: { ...opts.headers, authorization: opts.headers.authorization && '<owner>' },
    }).slice(0, 1500);

  /** What is wrong with a response, or null: an undeclared 5xx, or an error outside its envelope. */
  function problem(
    route: RouteInputs,
    res: { statusCode: number; headers: Record<string, unknown>; body: string },
  ): string | null {
    const status = res.statusCode;
    const responses = (route.schema as { response?: Record<string, unknown> }).response ?? {};
    const declared = String(status) in responses;
    if (status >= 500 && (status === 500 || !declared)) return `status ${status}`;
    if (status < 400) return null;
    const type = String(res.headers['content-type'] ?? '');
    if (type.startsWith('text/html')) return null; // hosted pages render their own errors
    if (!type.includes('application/json')) return `error with content-type ${type}`;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.body);
    } catch {
      return 'error body is not JSON';
    }
    if (route.url.startsWith('/oauth2/')) {
      const ok =
        typeof body.error === 'string' &&
        (body.error_description === undefined || typeof body.error_description === 'string');
      return ok ? null : `not the OAuth envelope: ${res.body.slice(0, 200)}`;
    }
    const e = body.error as Record<string, unknown> | undefined;
    const ok =
      typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
    return ok ? null : `not the REST envelope: ${res.body.slice(0, 200)}`;
  }

  it('answers every generated request without an undeclared 5xx, in the right envelope', async () => {
    const all = registeredRoutes(t.app).flatMap((r) =>
      r.method
        .split(',')
        .filter((m) => m !== 'HEAD')
        .map((method) => ({ ...r, method })),
    );
    // Deletions last (the org and the caller's own account at the very end), so earlier requests
    // still find what they address.
    const rank = (r: { method: string; url: string }) =>
      r.method !== 'DELETE' ? 0 : r.url === '/users/me' ? 3 : /organizations\/:orgSlug$/.test(r.url) ? 2 : 1;
    const routes = all.filter((r) => !SKIPPED[`${r.method} ${r.url}`]).sort((a, b) => rank(a) - rank(b));
    assert.ok(routes.length > 80, `${routes.length} routes`);
    const failures: string[] = [];
    let sent = 0;
    const statuses = new Map<number, number>();
    const started = Date.now();
    for (const [i, route] of routes.entries()) {
      const samples = fc.sample(requestArb(route), { seed: SEED + i, numRuns: RUNS });
      for (const r of samples) {
        const opts = injectOptions(route.method, route, r);
        const logged = logLines.length;
        const res = await t.app.inject(opts);
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        // A value PostgreSQL refused got past the schema (the backstop answered 400): a schema gap.
        const fresh = logLines.slice(logged).join('\n');
        const p =
          problem(route, res) ??
          (fresh.includes('database refused a request value')
            ? `database refused a value: ${fresh}`
            : null) ??
          (fresh.includes('unhandled error') ? `unhandled error: ${fresh.slice(0, 800)}` : null);
        if (p)
          failures.push(
            `${route.method} ${route.url} (seed ${SEED + i}): ${p}\n    request: ${describe(opts)}`,
          );
      }
    }
    const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([code, n]) => `${code}×${n}`);
    console.log(
      `fuzz: ${sent} requests over ${routes.length} routes in ${Date.now() - started} ms (seed ${SEED}): ${byStatus.join(' ')}`,
    );
    const report = failures;
    assert.equal(
      report.length,
      0,
      `fuzz seed ${SEED} (reproduce: FUZZ_SEED=${SEED} npm test -- fuzz-routes):\n${report.join('\n')}`,
    );
  });
});
