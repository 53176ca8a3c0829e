import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedSerializerFactory } from '../../src/http/serializer.js';

describe('response serializers', () => {
  const route = (schema: unknown, url = '/a', httpStatus = '200') => ({
    method: 'GET',
    url,
    httpStatus,
    schema,
  });
  const Envelope = { type: 'object', properties: { error: { type: 'string' } } };

  it('compiles a schema once per process, whatever the route, status or app', () => {
    const a = cachedSerializerFactory()(undefined, {});
    const b = cachedSerializerFactory()(undefined, {});
    const first = a(route(Envelope, '/a', '404'));
    assert.equal(a(route({ ...Envelope }, '/b', '401')), first, 'the same schema text: the same serializer');
    assert.equal(b(route(Envelope, '/c', '403')), first, 'another app of the process');
    assert.equal(first({ error: 'x', secret: 'y' }), '{"error":"x"}');
  });

  it('keeps schemas and options apart', () => {
    const compile = cachedSerializerFactory()(undefined, {});
    const other = compile(route({ type: 'object', properties: { id: { type: 'string' } } }));
    assert.notEqual(other, compile(route(Envelope)));
    assert.equal(other({ id: 'i', error: 'e' }), '{"id":"i"}');
    const Shared = { $id: 'Shared', type: 'object', properties: { n: { type: 'integer' } } };
    const withShared = cachedSerializerFactory()({ Shared }, {})(route({ $ref: 'Shared#' }));
    assert.equal(withShared({ n: 2, x: 1 }), '{"n":2}');
    const noRounding = cachedSerializerFactory()(undefined, {})(route({ type: 'integer' }));
    const ceil = cachedSerializerFactory()(undefined, { rounding: 'ceil' })(route({ type: 'integer' }));
    assert.notEqual(ceil, noRounding);
    assert.equal(ceil(1.2), '2');
  });

  it('caches nothing whose options or schema JSON would not tell apart', () => {
    // Two apps whose Ajv formats differ only in a RegExp: as JSON both are `{}`.
    const tagged = (pattern: RegExp) =>
      cachedSerializerFactory()(undefined, { ajv: { formats: { tag: pattern } } })(
        route({ anyOf: [{ type: 'string', format: 'tag' }, { type: 'number' }] }),
      );
    const a = tagged(/^a/);
    const b = tagged(/^b/);
    assert.notEqual(a, b);
    assert.equal(b('bob'), '"bob"');
    const withDate = (d: Date) =>
      cachedSerializerFactory()(undefined, {})(route({ type: 'string', default: d }));
    assert.notEqual(withDate(new Date(1)), withDate(new Date(2)));
  });
});
