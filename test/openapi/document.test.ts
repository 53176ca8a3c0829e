import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';
import { isDocumented } from '../../src/openapi/document.js';
import { buildTestApp, createUser, json, type TestApp } from '../helpers/app.js';

/** The hosted HTML pages, the only routes the document may leave out (DESIGN.md §3). */
const HOSTED_PAGES = [
  'GET /console',
  'GET /console/*',
  'GET /console/assets/*',
  // The brand editor's preview: the hosted sign-in page in the console's frame.
  'GET /console/brand-preview',
  'GET /docs',
  'GET /docs/docs.js',
  'GET /docs/swagger-ui.css',
  'GET /docs/swagger-ui-bundle.js',
  'GET /signin/:id',
  'GET /signin/:id/unmet',
  'GET /device',
  'GET /interactions/:id/providers/:type',
  'GET /oauth/:type/:oauthCallbackId/callback',
  'POST /oauth/:type/:oauthCallbackId/callback',
  'GET /oauth/telegram/:oauthCallbackId/widget',
  // The provider-link confirmation page's form post, and the hosted pages' script files.
  'POST /oauth/link/:linkId/confirm',
  'GET /static/:file',
  // The interface's alias of GET /users/me.
  'GET /users/current',
];

type Operation = {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Record<string, string[]>[];
  responses: Record<
    string,
    { $ref?: string; description: string; content?: Record<string, { schema: unknown }> }
  >;
  requestBody?: { content: Record<string, unknown> };
};

describe('GET /openapi.json', () => {
  let t: TestApp;
  let text: string;
  let doc: { openapi: string; paths: Record<string, Record<string, Operation>>; components: any };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
  const op = (method: string, path: string) => doc.paths[path][method];
  /** A response, or the shared one (`#/components/responses/…`) it refers to. */
  const response = (r: { $ref?: string }) =>
    (r.$ref ? doc.components.responses[r.$ref.split('/').pop()!] : r) as Operation['responses'][string];

  before(async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    text = res.body;
    doc = JSON.parse(text);
  });
  after(() => t.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    assert.equal(result.valid, true);
  });

  it('lints clean with Spectral’s recommended oas rules (no error, no warning)', async () => {
    const { Document, Spectral } = spectralCore;
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[spectralRulesets.oas as never, 'recommended']] } as never);
    const results = await spectral.run(new Document(text, spectralParsers.Json));
    const findings = results
      .filter((r) => r.severity <= 1)
      .map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`);
    assert.deepEqual(findings, []);
  });

  it('describes every registered route except the hosted pages, each with its own id, summary and tag', () => {
    // A CORS preflight is plumbing of a described route's URL, not an operation of its own.
    for (const r of t.app.apiRoutes.filter((r) => r.method === 'OPTIONS'))
      assert.ok(
        t.app.apiRoutes.some((d) => d.url === r.url && d.method !== 'OPTIONS' && isDocumented(d)),
        `OPTIONS ${r.url} answers for a described route`,
      );
    const registered = t.app.apiRoutes.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
    const hidden = registered.filter((r) => !isDocumented(r)).map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(hidden.sort(), [...HOSTED_PAGES].sort(), 'only hosted pages are left out');
    for (const r of registered.filter(isDocumented)) {
      const where = `${r.method} ${r.url}`;
      const o = doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()];
      assert.ok(o, `${where} is in the document`);
      assert.ok(r.schema?.operationId, `${where} names its operationId in its schema`);
      assert.ok(r.schema?.summary && !r.schema.summary.includes('\n'), `${where} has a one-line summary`);
      assert.equal(r.schema?.tags?.length, 1, `${where} has a tag`);
      assert.equal(o.operationId, r.schema.operationId);
    }
    const ids = operations().map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    assert.equal(ids.length, registered.filter(isDocumented).length);
  });

  it('keeps the operationId on the route schema, where metrics find it', async () => {
    let seen: unknown;
    const probe = await buildTestApp({
      routes: (app) => {
        app.addHook('onRequest', async (req) => {
          seen = req.routeOptions.schema?.operationId;
        });
      },
    });
    try {
      await probe.app.inject({ method: 'GET', url: '/admin/identity/organizations/acme/brands' });
      assert.equal(seen, 'adminListBrands', 'the admin mirror has its own id');
      await probe.app.inject({ method: 'GET', url: '/identity/organizations/acme/brands' });
      assert.equal(seen, 'listBrands');
    } finally {
      await probe.close();
    }
  });

  it('declares a schema for every status, and the security each operation needs', () => {
    for (const { path, method, op: o } of operations()) {
      const where = `${method} ${path}`;
      assert.ok(o.description.length > 0, `${where} has a description`);
      assert.ok(Array.isArray(o.security), `${where} states its security`);
      for (const [status, given] of Object.entries(o.responses)) {
        const r = response(given);
        assert.ok(r.description, `${where} ${status} has a description`);
        if (status === '204' || status === '302' || status === '303') continue;
        if (o.operationId === 'revokeToken' && status === '200') continue; // an empty body by RFC 7009
        assert.ok(r.content, `${where} ${status} has a body schema`);
        for (const media of Object.values(r.content)) assert.ok(media.schema, `${where} ${status} schema`);
      }
    }
  });

  it('derives credentials, permission and rate limit from the route’s guards', () => {
    const create = op('post', '/identity/organizations/{orgSlug}/brands/{brandSlug}/apps');
    assert.deepEqual(create.security, [{ consoleToken: [] }, { apiKey: [] }]);
    assert.match(create.description, /`org\.apps\.edit`/);
    assert.match(create.description, /30 per minute \(`orgWrite`\)/);
    assert.deepEqual(create.tags, ['Apps']);
    const mirror = op('post', '/admin/identity/organizations/{orgSlug}/brands/{brandSlug}/apps');
    assert.equal(mirror.operationId, 'adminCreateApp');
    assert.match(mirror.description, /`admin\.orgs\.edit`/);
    // API keys are made with an access token only.
    assert.deepEqual(op('post', '/users/me/api-keys').security, [{ consoleToken: [] }]);
    assert.match(op('get', '/users/me/api-keys').description, /`users:read`/);
    assert.match(op('post', '/users/find-by-identifier').description, /`admin\.users\.view`/);
    // Public and client-authenticated operations.
    assert.deepEqual(op('get', '/.well-known/jwks.json').security, []);
    assert.deepEqual(op('get', '/identity/organizations/{orgSlug}/token-gates/{gateId}/check').security, []);
    assert.deepEqual(op('post', '/oauth2/token').security, [{ clientBasic: [] }, {}]);
    assert.deepEqual(op('get', '/userinfo').security, [{ accessToken: [] }]);
  });

  it('takes the OAuth endpoints’ bodies as forms and uploads as multipart', () => {
    for (const path of [
      '/oauth2/token',
      '/oauth2/revoke',
      '/oauth2/introspect',
      '/oauth2/device/authorize',
    ]) {
      assert.deepEqual(Object.keys(op('post', path).requestBody!.content), [
        'application/x-www-form-urlencoded',
      ]);
      assert.deepEqual(response(op('post', path).responses['400']).content!['application/json'].schema, {
        $ref: '#/components/schemas/OAuthError',
      });
    }
    assert.deepEqual(Object.keys(op('post', '/files').requestBody!.content), ['multipart/form-data']);
  });

  it('names the shared schemas as components and refers to them', () => {
    for (const name of ['Org', 'Brand', 'App', 'Webhook', 'TokenGate', 'ErrorEnvelope', 'OAuthError'])
      assert.ok(doc.components.schemas[name], `component ${name}`);
    assert.deepEqual(
      op('get', '/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}').responses['200']
        .content!['application/json'].schema,
      { $ref: '#/components/schemas/App' },
    );
    const notFound = op('get', '/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}')
      .responses['404'];
    assert.deepEqual(notFound, { $ref: '#/components/responses/Error404' });
    assert.deepEqual(response(notFound).content!['application/json'].schema, {
      $ref: '#/components/schemas/ErrorEnvelope',
    });
  });

  it("hoists a request body's $defs into components, so each level of a policy rule is written once", () => {
    const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(refs.length > 100, `${refs.length} references found`);
    assert.deepEqual(
      refs.filter((r) => !/^#\/components\/(schemas|responses)\/[A-Za-z0-9]+$/.test(r)),
      [],
      'every $ref points into the components (a #/$defs/… would resolve against the document)',
    );
    for (const r of new Set(refs)) {
      const [, kind, name] = r.split('/').slice(1);
      assert.ok(doc.components[kind as string][name as string], `${r} resolves`);
    }
    const body = (method: string) =>
      (
        op(method, `/identity/organizations/{orgSlug}/gate-policies${method === 'post' ? '' : '/{policyId}'}`)
          .requestBody!.content['application/json'] as { schema: { properties: { rule: unknown } } }
      ).schema;
    for (const method of ['post', 'patch'])
      assert.deepEqual(body(method).properties.rule, { $ref: '#/components/schemas/GateRuleInput' });
    assert.deepEqual(doc.components.schemas.GateRuleInputLevel2.properties.not, {
      $ref: '#/components/schemas/GateRuleInputLevel1',
    });
    // Written out, each body was 187 KB: five levels of four children.
    assert.ok(JSON.stringify(body('post')).length < 2000);
  });

  it('sends the same bytes on every request, cacheable and open to other origins', async () => {
    const again = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(again.body, text);
    assert.equal(again.headers['access-control-allow-origin'], '*');
    assert.match(String(again.headers['cache-control']), /max-age/);
  });

  it('is served to anyone, without credentials, and the API it describes answers as it says', async () => {
    const user = await createUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: user.auth,
      payload: {},
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.code, 'validation_failed');
  });
});

describe('the response contract of the test helpers', () => {
  it('reports a response whose body does not match its declared schema', async () => {
    const t = await buildTestApp({
      routes: (app) => {
        app.get(
          '/contract-probe',
          {
            schema: {
              operationId: 'contractProbe',
              summary: 'A probe',
              tags: ['Probe'],
              response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
            },
          },
          async (_req, reply) => reply.header('content-type', 'application/json').send('{"n":"x"}'),
        );
      },
    });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/contract-probe' });
      assert.equal(res.statusCode, 200);
      const undeclared = await t.app.inject({ method: 'GET', url: '/files/aaaaaaaaaaaaaaaaaaaaaaaa.png' });
      assert.equal(undeclared.statusCode, 404);
      assert.equal(t.contract.violations.length, 1, t.contract.violations.join('\n'));
      assert.match(t.contract.violations[0], /GET \/contract-probe → 200 \(contractProbe\)/);
      assert.throws(() => t.contract.assertClean(), /1 response\(s\) do not match/);
    } finally {
      t.contract.violations.length = 0;
      await t.close();
    }
  });
});
