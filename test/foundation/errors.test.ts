import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from 'typebox';
import { ApiError, OAuthError } from '../../src/http/errors.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';

describe('error envelopes', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({
      routes(app) {
        app.post(
          '/test/echo',
          {
            schema: {
              body: Type.Object(
                {
                  name: Type.String({ minLength: 1, maxLength: 5 }),
                  count: Type.Optional(Type.Integer({ minimum: 0 })),
                },
                { additionalProperties: false },
              ),
              querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })) }),
            },
          },
          async (req) => ({ ok: true, body: req.body, query: req.query }),
        );
        app.get('/test/boom', async () => {
          throw new Error('secret internals: password=hunter2');
        });
        app.get('/test/conflict', async () => {
          throw new ApiError(409, 'conflict', 'already there');
        });
        app.post('/oauth2/test-endpoint', async () => {
          throw new OAuthError('invalid_client', 'bad client');
        });
        app.post(
          '/oauth2/test-validated',
          { schema: { body: Type.Object({ grant_type: Type.String() }) } },
          async () => ({ ok: true }),
        );
      },
    });
  });
  after(() => t.close());

  it('lists every failing field with a code', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      payload: { name: '', extra: 1, count: -1 },
    });
    assert.equal(res.statusCode, 400);
    const body = json(res);
    assert.equal(body.error.code, 'validation_failed');
    const fields = body.error.details.fields
      .map((f: { field: string; code: string }) => `${f.field}:${f.code}`)
      .sort();
    assert.deepEqual(fields, ['count:out_of_range', 'extra:unknown_field', 'name:too_short']);
  });

  it('names a missing required field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/test/echo', payload: {} });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(json(res).error.details.fields, [
      { field: 'name', code: 'required', message: 'is required' },
    ]);
  });

  it('does not coerce JSON body types but does coerce query strings', async () => {
    const bad = await t.app.inject({ method: 'POST', url: '/test/echo', payload: { name: 123 } });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).error.details.fields[0].code, 'invalid_type');
    const ok = await t.app.inject({ method: 'POST', url: '/test/echo?limit=3', payload: { name: 'ab' } });
    assert.equal(ok.statusCode, 200);
    assert.equal(json(ok).query.limit, 3);
    const out = await t.app.inject({ method: 'POST', url: '/test/echo?limit=11', payload: { name: 'ab' } });
    assert.equal(out.statusCode, 400);
    assert.equal(json(out).error.details.fields[0].field, 'limit');
  });

  it('answers malformed JSON with 400 validation_failed', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.code, 'validation_failed');
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    assert.equal(res.statusCode, 415);
    assert.equal(json(res).error.code, 'unsupported_media_type');
  });

  it('answers an oversized body with 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(json(res).error.code, 'payload_too_large');
  });

  it('answers unknown routes with 404 not_found without echoing the query', async () => {
    const res = await t.app.inject('/nope?token=abc');
    assert.equal(res.statusCode, 404);
    const body = json(res);
    assert.equal(body.error.code, 'not_found');
    assert.ok(!res.body.includes('abc'));
  });

  it('hides internals of unexpected errors behind 500 internal_error', async () => {
    const res = await t.app.inject('/test/boom');
    assert.equal(res.statusCode, 500);
    assert.equal(json(res).error.code, 'internal_error');
    assert.ok(!res.body.includes('hunter2'));
    assert.ok(!res.body.includes('at '));
  });

  it('renders ApiError as the REST envelope', async () => {
    const res = await t.app.inject('/test/conflict');
    assert.equal(res.statusCode, 409);
    assert.deepEqual(json(res), { error: { code: 'conflict', message: 'already there' } });
  });

  it('renders OAuth errors in the OAuth envelope under /oauth2', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/oauth2/test-endpoint' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(json(res), { error: 'invalid_client', error_description: 'bad client' });
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('renders schema failures under /oauth2 as invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/test-validated',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'x=1',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error, 'invalid_request');
  });

  it('sets defensive headers', async () => {
    const res = await t.app.inject('/healthz');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });
});
