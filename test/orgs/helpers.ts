import assert from 'node:assert/strict';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { buildTestApp, json, type TestApp, type TestUser } from '../helpers/app.js';
import type { TestOrg } from '../helpers/fixtures.js';

/** A test app whose rate limits are high enough that functional tests never meet them. */
export function buildOrgsTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  return buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000', ...env } });
}

export const randomSlug = (prefix = 'org') => `${prefix}-${randomAlphanumeric(8).toLowerCase()}`;

/** Creates an org through the API; the creator is its Owner. */
export async function createOrgViaApi(
  t: TestApp,
  user: TestUser,
  body: Record<string, unknown> = {},
): Promise<{ id: string; slug: string; name: string } & Record<string, unknown>> {
  const slug = randomSlug();
  const res = await t.app.inject({
    method: 'POST',
    url: '/identity/organizations',
    headers: user.auth,
    payload: { name: `Org ${slug}`, slug, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** The org's built-in role ids, read from the database. */
export async function builtInRoles(t: TestApp, orgId: string): Promise<TestOrg['roles']> {
  const rows = await t.ctx.db
    .selectFrom('roles')
    .select(['id', 'built_in'])
    .where('org_id', '=', orgId)
    .execute();
  return Object.fromEntries(
    rows.filter((r) => r.built_in).map((r) => [r.built_in, r.id]),
  ) as TestOrg['roles'];
}

export async function auditRows(t: TestApp, orgId: string) {
  return t.ctx.db
    .selectFrom('audit_log')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('timestamp')
    .orderBy('id')
    .execute();
}

export async function eventRows(t: TestApp, orgId: string) {
  return t.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Counts of audit entries and events of an org: equal before and after a refused mutation. */
export async function recordCounts(t: TestApp, orgId: string) {
  return { audit: (await auditRows(t, orgId)).length, events: (await eventRows(t, orgId)).length };
}

export function assertError(
  res: { statusCode: number; body: string },
  status: number,
  code: string,
): Record<string, any> {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.equal(body.error.code, code, res.body);
  return body.error;
}

export function assertFieldError(
  res: { statusCode: number; body: string },
  field: string,
  code?: string,
): void {
  const err = assertError(res, 400, 'validation_failed');
  const f = (err.details.fields as Array<{ field: string; code: string }>).find((x) => x.field === field);
  assert.ok(f, `expected a field error on ${field}: ${res.body}`);
  if (code) assert.equal(f.code, code, res.body);
}
