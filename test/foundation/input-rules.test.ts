import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { Type } from 'typebox';
import Fastify from 'fastify';
import { makeAjv } from '../../src/http/ajv.js';
import {
  hardenSchema,
  inputDefaults,
  inputRuleViolations,
  installInputRules,
  registeredRoutes,
  SAFE_TEXT_PATTERN,
} from '../../src/http/input-rules.js';
import { CreatePolicyBody } from '../../src/modules/token-gates/gate-policies.schemas.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';

/** Issue 14, findings 5 and 6: NUL bytes and out-of-range integers are refused before the database. */
describe('input rule: every string NUL-free and bounded, every integer in range', () => {
  let t: TestApp;
  let user: TestUser;
  let org: TestOrg;
  before(async () => {
    t = await buildTestApp({
      routes(app) {
        // Routes that hand their input to PostgreSQL unchecked: the backstop behind the schema rule.
        const raw = (req: { headers: Record<string, unknown> }) => String(req.headers['x-raw'] ?? '');
        app.get('/test/raw-text', async (req) => {
          await sql`select ${raw(req)}::text as v`.execute(t.ctx.db);
          return { ok: true };
        });
        app.get('/test/raw-int', async (req) => {
          await sql`select ${raw(req)}::integer as v`.execute(t.ctx.db);
          return { ok: true };
        });
        app.get('/oauth2/test-raw-text', async (req) => {
          await sql`select ${raw(req)}::text as v`.execute(t.ctx.db);
          return { ok: true };
        });
      },
    });
    user = await createUser(t);
    org = await seedOrg(t, user);
  });
  after(() => t.close());

  const fields = (res: { body: string }) =>
    json(res).error.details.fields.map((f: { field: string; code: string }) => `${f.field}:${f.code}`);

  it('refuses a NUL in an OAuth form field with 400 invalid_request, unauthenticated', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials&client_id=app%00x&client_secret=s',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_request');
    assert.match(json(res).error_description, /client_id/);
  });

  it('refuses a NUL in HTTP Basic client credentials as malformed (401 invalid_client)', async () => {
    const basic = Buffer.from('app%00x:secret').toString('base64');
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      payload: 'grant_type=client_credentials',
    });
    assert.equal(res.statusCode, 401);
    assert.equal(json(res).error, 'invalid_client');
  });

  it('refuses a NUL in a JSON body field with 400 validation_failed naming the field', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: user.auth,
      payload: { name: 'Acme\u0000', slug: 'acme-nul' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.code, 'validation_failed');
    assert.deepEqual(fields(res), ['name:invalid_format']);
  });

  it('refuses an unpaired surrogate in a JSON string (PostgreSQL refuses it in jsonb)', async () => {
    // Found by the route fuzz test: a gate renamed to "\ud800" reached the audit log's jsonb.
    const res = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: '{"name":"Acme \\ud800","slug":"acme-surrogate"}',
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(fields(res), ['name:invalid_format']);
    const paired = await t.app.inject({
      method: 'POST',
      url: '/identity/organizations',
      headers: { ...user.auth, 'content-type': 'application/json' },
      payload: '{"name":"Acme \\ud83d\\ude00","slug":"acme-emoji"}',
    });
    assert.equal(paired.statusCode, 201, paired.body);
    assert.equal(json(paired).name, 'Acme 😀');
  });

  // Found by the route fuzz test: the router's own errors and errors on page routes left the envelope.
  it("answers the router's own refusals in the REST envelope", async () => {
    for (const url of [
      `/interactions/${'a'.repeat(300)}`,
      '/oauth/%ED%A0%80/x/callback',
      '/users/%E0%A4%A',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(json(res).error.code, 'bad_request', `${url}: ${res.body}`);
    }
  });

  it('answers a validation error on a page route in the REST envelope, not "[object Object]"', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/signin/not!an!id' });
    assert.equal(res.statusCode, 400);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(fields(res), ['id:invalid_format']);
  });

  it('refuses a NUL in a path parameter', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/users/me/api-keys/key%00x',
      headers: user.auth,
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(fields(res), ['id:invalid_format']);
    // The public gate check has its own fast validators; they follow the rule too (422 is its status).
    const check = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations/${org.slug}/token-gates/gate%00x/check?walletAddress=11111111111111111111111111111111`,
    });
    assert.equal(check.statusCode, 422);
    assert.deepEqual(fields(check), ['gateId:invalid_format']);
    const wallet = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations/${org.slug}/token-gates/gate_x/check?walletAddress=1111%00`,
    });
    assert.equal(wallet.statusCode, 422);
    assert.deepEqual(fields(wallet), ['walletAddress:invalid_format']);
  });

  it('refuses a NUL in a query filter', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations/${org.slug}/audit-log?action=org.created%00`,
      headers: user.auth,
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(fields(res), ['action:invalid_format']);
  });

  it('refuses a huge offset or limit with 400 out_of_range', async () => {
    for (const q of ['offset=99999999999999999999', 'offset=2147483648', 'limit=1e400']) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/identity/organizations?${q}`,
        headers: user.auth,
      });
      assert.equal(res.statusCode, 400, q);
      assert.equal(json(res).error.code, 'validation_failed', q);
    }
    const edge = await t.app.inject({
      method: 'GET',
      url: `/identity/organizations?offset=${inputDefaults.maximum}`,
      headers: user.auth,
    });
    assert.equal(edge.statusCode, 200);
    assert.equal(json(edge).items.length, 0);
  });

  it('answers 400, not 500, when PostgreSQL refuses a value the schema let through', async () => {
    const nul = await t.app.inject({
      method: 'GET',
      url: '/test/raw-text',
      headers: { 'x-raw': 'a\u0000b' },
    });
    assert.equal(nul.statusCode, 400);
    assert.equal(json(nul).error.code, 'validation_failed');
    const big = await t.app.inject({
      method: 'GET',
      url: '/test/raw-int',
      headers: { 'x-raw': '99999999999' },
    });
    assert.equal(big.statusCode, 400);
    assert.equal(json(big).error.code, 'validation_failed');
    const oauth = await t.app.inject({
      method: 'GET',
      url: '/oauth2/test-raw-text',
      headers: { 'x-raw': 'a\u0000b' },
    });
    assert.equal(oauth.statusCode, 400);
    assert.equal(json(oauth).error, 'invalid_request');
  });

  it('covers every registered route: each string bounded and NUL-free, each number in range', () => {
    const routes = registeredRoutes(t.app);
    assert.ok(routes.length > 80, `only ${routes.length} routes seen`);
    const problems = routes.flatMap((r) =>
      Object.entries(r.schema)
        .filter(([part]) => ['body', 'querystring', 'params', 'headers'].includes(part))
        .flatMap(([part, s]) => inputRuleViolations(s).map((p) => `${r.method} ${r.url} ${part}${p}`)),
    );
    assert.deepEqual(problems, []);
    // Every path parameter is declared, so none reaches a handler unchecked.
    for (const r of routes)
      for (const [, name] of r.url.matchAll(/:([A-Za-z0-9_]+)/g)) {
        const params = r.schema.params as { properties: Record<string, unknown> };
        assert.ok(params?.properties?.[name as string], `${r.method} ${r.url} :${name}`);
      }
  });

  it("keeps the interface's own limits where a schema declares them", () => {
    type Props = { properties: Record<string, Record<string, unknown>> };
    const route = (method: string, url: string) => {
      const r = registeredRoutes(t.app).find((x) => x.method === method && x.url === url);
      assert.ok(r, `${method} ${url}`);
      return r.schema;
    };
    const body = (route('POST', '/identity/organizations').body as Props).properties;
    assert.equal(body.name?.maxLength, 80);
    assert.equal(body.name?.minLength, 1);
    assert.equal(body.slug?.pattern, '^[a-z0-9-]{3,30}$');
    const q = (route('GET', '/identity/organizations').querystring as Props).properties;
    assert.equal(q.limit?.maximum, 100);
    assert.equal(q.offset?.maximum, inputDefaults.maximum);
  });

  it('hardens a schema shared by several routes once, so a shared $id compiles', async () => {
    const app = Fastify();
    installInputRules(app);
    const ajv = makeAjv(false);
    app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
    const Shared = Type.Object({ name: Type.String() }, { $id: 'SharedBody' });
    app.post('/a', { schema: { body: Shared } }, async () => ({ ok: 'a' }));
    app.post('/b', { schema: { body: Shared } }, async () => ({ ok: 'b' }));
    await app.ready();
    assert.equal((await app.inject({ method: 'POST', url: '/b', payload: { name: 'x' } })).statusCode, 200);
    const nul = await app.inject({ method: 'POST', url: '/a', payload: { name: 'x\u0000' } });
    assert.equal(nul.statusCode, 400);
    await app.close();
  });

  it("follows a reference into the root's $defs, and refuses a cycle, a missing def or any other $ref", () => {
    const level = (child: unknown) => ({
      type: 'object',
      properties: { not: child, id: { type: 'string' } },
    });
    const leaf = {
      type: 'object',
      properties: { id: { type: 'string', maxLength: 9, pattern: SAFE_TEXT_PATTERN } },
    };
    const body = ($defs: object, ref: string) => ({
      type: 'object',
      $defs,
      properties: { rule: { $ref: ref } },
    });
    const bounded = body({ Leaf: leaf, Two: level({ $ref: '#/$defs/Leaf' }) }, '#/$defs/Two');
    // The unbounded id of Two is found where Two is defined; the reference itself is fine.
    assert.deepEqual(inputRuleViolations(bounded), [
      '/$defs/Two/properties/id: string without maxLength',
      '/$defs/Two/properties/id: string whose pattern allows NUL',
    ]);
    assert.deepEqual(inputRuleViolations(hardenSchema(bounded)), []);
    const cyclic = hardenSchema(body({ Loop: level({ $ref: '#/$defs/Loop' }) }, '#/$defs/Loop'));
    assert.deepEqual(inputRuleViolations(cyclic), [
      "/$defs/Loop: refers back to itself; a rule's depth must be bounded",
    ]);
    assert.deepEqual(
      inputRuleViolations(hardenSchema({ type: 'object', properties: { a: { $ref: '#/$defs/Nope' } } })),
      [': #/$defs/Nope names no schema in $defs'],
    );
    for (const ref of ['#/definitions/X', 'https://example.test/s.json', '#/$defs/X/properties/a'])
      assert.match(
        inputRuleViolations({ $defs: { X: leaf }, type: 'object', properties: { a: { $ref: ref } } }).join(),
        /\/properties\/a: a \$ref the rule cannot follow/,
      );
  });

  it('validates a gate policy rule through its $defs, five levels and no more', async () => {
    const app = Fastify();
    installInputRules(app);
    const ajv = makeAjv(false);
    app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
    app.post('/policy', { schema: { body: CreatePolicyBody } }, async () => ({ ok: true }));
    await app.ready();
    const post = (rule: unknown) =>
      app.inject({ method: 'POST', url: '/policy', payload: { name: 'p', rule } });
    const deep = (n: number): unknown => (n === 1 ? { gate: 'g1' } : { not: deep(n - 1) });
    assert.equal((await post(deep(5))).statusCode, 200);
    // A sixth level is left to the service (which names `rule`); the schema stops looking there.
    assert.equal((await post(deep(6))).statusCode, 200);
    assert.equal((await post({ not: { not: { not: { not: { gate: 'x\u0000' } } } } })).statusCode, 400);
    assert.equal((await post({ all: [{ any: [{ gate: 'a', extra: 1 }] }] })).statusCode, 400);
    await app.close();
  });

  it('refuses to register a route whose input accepts any value', async () => {
    const app = Fastify();
    installInputRules(app);
    assert.throws(
      () =>
        app.post(
          '/test/anything',
          { schema: { body: Type.Object({ data: Type.Unknown() }) } },
          async () => ({}),
        ),
      /POST \/test\/anything breaks the input rule: body\/properties\/data: accepts any value/,
    );
    await app.close();
  });
});
