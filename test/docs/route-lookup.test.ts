// `npm run route` (scripts/route.ts), the lookup docs/ARCHITECTURE.md gives a newcomer: it must find
// every operation of the API, and follow a REST route down to its SQL.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { findOperations, formatTrace, loadIndex, traceOperation } from '../../scripts/route.js';

const { index, regs, all } = loadIndex(fileURLToPath(new URL('../..', import.meta.url)));

test('every operation of the OpenAPI document is traced to its registration', () => {
  assert.ok(all.length > 100, `only ${all.length} operations read`);
  const missing = all.filter((op) => !traceOperation(index, regs, op));
  assert.deepEqual(
    missing.map((op) => `${op.method} ${op.path} (${op.operationId})`),
    [],
  );
});

test('a query names operations by id, by path (:param or {param}) or by method and path', () => {
  assert.deepEqual(
    findOperations(all, 'createApp').map((o) => o.operationId),
    ['createApp'],
  );
  const byPath = findOperations(all, '/identity/organizations/:orgSlug/brands/:brandSlug/apps').map(
    (o) => o.operationId,
  );
  assert.deepEqual(byPath.sort(), ['createApp', 'listApps']);
  assert.deepEqual(
    findOperations(all, 'post /identity/organizations/{orgSlug}/brands/{brandSlug}/apps').map(
      (o) => o.operationId,
    ),
    ['createApp'],
  );
  assert.deepEqual(findOperations(all, 'GET /no/such/path'), []);
});

test('a REST mutation is followed from its route to schemas, service and queries', () => {
  const [op] = findOperations(all, 'createApp');
  const trace = traceOperation(index, regs, op)!;
  const text = formatTrace(trace);
  assert.match(trace.route.file, /\.routes\.ts$/, text);
  const body = trace.schemas.find((s) => s.part === 'body');
  assert.ok(body && typeof body.site !== 'string' && body.site.file.endsWith('.schemas.ts'), text);
  const service = trace.handler.find((h) => h.file.endsWith('.service.ts'));
  assert.ok(service, text);
  assert.ok(
    service.calls.some((c) => c.file.endsWith('.queries.ts')),
    text,
  );
});

test('the admin mirror is traced to the route it mirrors', () => {
  const [op] = findOperations(all, 'adminCreateApp');
  const trace = traceOperation(index, regs, op)!;
  const [plain] = findOperations(all, 'createApp');
  assert.equal(trace.route.file, traceOperation(index, regs, plain)!.route.file);
});
