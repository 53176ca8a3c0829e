import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, buildTestApp, createUser } from '../helpers/app.js';
import { basicAuth, createApp, createBrand, form } from '../helpers/oidc.js';

interface Line {
  msg: string;
  level: number;
  reqId?: string;
  method?: string;
  route?: string | null;
  status?: number;
  ms?: number;
  errorCode?: string | null;
  [k: string]: unknown;
}

function sink() {
  const lines: Line[] = [];
  return {
    lines,
    stream: { write: (l: string) => void lines.push(JSON.parse(l) as Line) },
    requests: () => lines.filter((l) => l.msg === 'request'),
    clear: () => void lines.splice(0),
  };
}

async function scrape(t: TestApp): Promise<string> {
  assert.ok(t.ctx.metrics.port, 'the metrics listener is up');
  const res = await fetch(`http://127.0.0.1:${t.ctx.metrics.port}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  return res.text();
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const have = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const DISCOVERY = '/.well-known/openid-configuration';

describe('request logs and metrics', () => {
  let t: TestApp;
  const log = sink();
  before(async () => {
    t = await buildTestApp({
      env: { LOG_LEVEL: 'info', METRICS_PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_MULTIPLIER: '0.01' },
      logStream: log.stream,
      routes: (app) => {
        app.get(
          '/test/with-operation',
          {
            schema: {
              operationId: 'testWithOperation',
              response: { 200: { type: 'object', properties: { ok: { type: 'number' } } } },
            } as object,
          },
          async () => ({
            ok: 1,
          }),
        );
      },
    });
  });
  after(() => t.close());

  it('writes one line per request: method, route template, status, duration, request id', async () => {
    log.clear();
    const res = await t.app.inject({ url: `${DISCOVERY}?x=secret-in-query` });
    assert.equal(res.statusCode, 200);
    const lines = log.requests();
    assert.equal(lines.length, 1, JSON.stringify(log.lines));
    const [l] = lines;
    assert.equal(l.method, 'GET');
    assert.equal(l.route, DISCOVERY);
    assert.equal(l.status, 200);
    assert.equal(typeof l.ms, 'number');
    assert.ok(typeof l.reqId === 'string' && l.reqId.length > 0, 'request id');
    assert.equal(l.errorCode, undefined);
    assert.ok(!JSON.stringify(log.lines).includes('secret-in-query'));
    assert.ok(!log.lines.some((x) => /incoming request|request completed/.test(x.msg)), 'no Fastify lines');
  });

  it('logs the route template, never the path with ids, and the error code of a refusal', async () => {
    log.clear();
    const res = await t.app.inject({ url: '/identity/organizations/acme-secret-slug/members' });
    assert.equal(res.statusCode, 401);
    const [l] = log.requests();
    assert.equal(l.status, 401);
    assert.equal(l.errorCode, 'unauthorized');
    assert.match(String(l.route), /:orgSlug/);
    assert.ok(!JSON.stringify(l).includes('acme-secret-slug'));
  });

  it('logs OAuth error codes and requests no route matched', async () => {
    log.clear();
    const f = form({ grant_type: 'nope' });
    await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: f.headers, payload: f.payload });
    await t.app.inject({ url: '/no/such/route' });
    const [token, missing] = log.requests();
    assert.equal(token.errorCode, 'unsupported_grant_type');
    assert.equal(missing.status, 404);
    assert.equal(missing.errorCode, 'not_found');
    assert.equal(missing.route, null);
  });

  it('does not log health probes', async () => {
    log.clear();
    assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200);
    assert.deepEqual(log.requests(), []);
  });

  it('counts requests by operationId (or method and route template) and status class', async () => {
    const before = await scrape(t);
    const base = sample(before, 'gatehouse_http_request_duration_seconds_count', {
      operation: 'testWithOperation',
      status_class: '2xx',
    });
    for (let i = 0; i < 3; i++) await t.app.inject({ url: '/test/with-operation' });
    await t.app.inject({ url: '/.well-known/jwks.json' });
    await t.app.inject({ url: '/no/such/route' });
    const text = await scrape(t);
    assert.equal(
      sample(text, 'gatehouse_http_request_duration_seconds_count', {
        operation: 'testWithOperation',
        status_class: '2xx',
      }),
      (base ?? 0) + 3,
    );
    const jwks = sample(text, 'gatehouse_http_request_duration_seconds_count', {
      status_class: '2xx',
      operation: 'GET /.well-known/jwks.json',
    });
    const jwksOp = [...text.matchAll(/operation="([^"]+)"/g)].map((m) => m[1]).find((o) => /jwks/i.test(o));
    assert.ok(jwks !== undefined || jwksOp, 'JWKS is counted under its operationId or its template');
    assert.ok(
      (sample(text, 'gatehouse_http_request_duration_seconds_count', {
        operation: 'no_route',
        status_class: '4xx',
      }) ?? 0) >= 1,
    );
    assert.match(
      text,
      /gatehouse_http_request_duration_seconds_bucket\{le="0.005",operation="testWithOperation",status_class="2xx"\}/,
    );
    assert.ok(!/operation="[^"]*healthz/.test(text), 'probes are not counted');
    // Process metrics and the queue gauges are there too.
    assert.match(text, /process_cpu_user_seconds_total/);
    assert.match(text, /nodejs_eventloop_lag_seconds/);
    assert.match(text, /^gatehouse_webhook_queue_depth 0$/m);
    assert.match(text, /gatehouse_webhook_oldest_pending_age_seconds 0/);
    assert.match(text, /gatehouse_token_gate_checks_total\{cache="hit"\} 0/);
    if (process.env.DATABASE_URL) assert.match(text, /gatehouse_db_pool_connections\{state="total"\} [1-9]/);
  });

  it('counts tokens issued by grant and app, and rate-limit refusals by limit', async () => {
    const brand = await createBrand(t);
    const client = await createApp(t, brand, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const f = form({ grant_type: 'client_credentials', scope: 'orders:read' });
    const ok = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { ...f.headers, ...basicAuth(client.clientId, client.clientSecret) },
      payload: f.payload,
    });
    assert.equal(ok.statusCode, 200, ok.body);
    // RATE_LIMIT_MULTIPLIER 0.01: 6 requests a minute per IP on the well-known routes.
    let refused = 0;
    for (let i = 0; i < 12; i++) {
      const r = await t.app.inject({ url: DISCOVERY, remoteAddress: '203.0.113.9' });
      if (r.statusCode === 429) refused++;
    }
    assert.ok(refused > 0);
    const text = await scrape(t);
    assert.equal(
      sample(text, 'gatehouse_tokens_issued_total', { grant: 'client_credentials', app: client.clientId }),
      1,
    );
    assert.equal(sample(text, 'gatehouse_rate_limit_refusals_total', { limit: 'wellKnown' }), refused);
  });

  it('serves nothing but /metrics on the metrics port, and nothing of it on the public one', async () => {
    const other = await fetch(`http://127.0.0.1:${t.ctx.metrics.port}/healthz`);
    assert.equal(other.status, 404);
    assert.equal((await t.app.inject({ url: '/metrics' })).statusCode, 404);
  });
});

describe('LOG_REQUESTS', () => {
  for (const [mode, expected] of [
    ['errors', [401]],
    ['off', []],
  ] as const) {
    it(`${mode}: logs ${expected.length ? 'only refused requests' : 'no request'}`, async () => {
      const log = sink();
      const t = await buildTestApp({ env: { LOG_LEVEL: 'info', LOG_REQUESTS: mode }, logStream: log.stream });
      try {
        const user = await createUser(t);
        await t.app.inject({ url: DISCOVERY });
        await t.app.inject({ url: '/users/me', headers: user.auth });
        await t.app.inject({ url: '/users/me' });
        assert.deepEqual(
          log.requests().map((l) => l.status),
          expected,
        );
      } finally {
        await t.close();
      }
    });
  }
});
