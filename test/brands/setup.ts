import assert from 'node:assert/strict';
import { newId, randomAlphanumeric } from '../../src/lib/ids.js';
import { createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
  raw: string;
}

/** A JSON request as `user` (no Authorization header when user is null). */
export async function call<T = any>(
  t: TestApp,
  user: TestUser | null,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
): Promise<Res<T>> {
  const res = await t.app.inject({
    method,
    url,
    headers: user ? user.auth : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return {
    status: res.statusCode,
    body: res.body ? json<T>(res) : (undefined as T),
    headers: res.headers,
    raw: res.body,
  };
}

export const orgUrl = (org: { slug: string }) => `/identity/organizations/${org.slug}`;
export const brandUrl = (org: { slug: string }, brand: string) => `${orgUrl(org)}/brands/${brand}`;

/** A new slug that matches `[a-z0-9-]{3,30}`. */
export const slug = (prefix = 'b') => `${prefix}-${randomAlphanumeric(8).toLowerCase()}`;

/** A member holding exactly `permissions` through a custom role. */
export async function memberWith(t: TestApp, org: TestOrg, permissions: string[]): Promise<TestUser> {
  const user = await createUser(t);
  const roleId = newId('role_');
  const now = t.clock.now();
  await t.ctx.db
    .insertInto('roles')
    .values({
      id: roleId,
      org_id: org.id,
      name: `custom-${randomAlphanumeric(6)}`,
      description: null,
      built_in: null,
      permissions,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await addMember(t, org, user, roleId);
  return user;
}

export interface World {
  owner: TestUser;
  org: TestOrg;
  /** Another org, with its own owner, for the 404 cases. */
  otherOwner: TestUser;
  otherOrg: TestOrg;
}

export async function world(t: TestApp): Promise<World> {
  const owner = await createUser(t);
  const org = await seedOrg(t, owner);
  const otherOwner = await createUser(t);
  const otherOrg = await seedOrg(t, otherOwner);
  return { owner, org, otherOwner, otherOrg };
}

export async function createBrand(
  t: TestApp,
  user: TestUser,
  org: TestOrg,
  fields: Record<string, unknown> = {},
): Promise<any> {
  const res = await call(t, user, 'POST', `${orgUrl(org)}/brands`, {
    slug: slug(),
    name: 'Brand',
    ...fields,
  });
  assert.equal(res.status, 201, res.raw);
  return res.body;
}

export function expect400(res: Res, field: string, code?: string): void {
  assert.equal(res.status, 400, res.raw);
  assert.equal(res.body.error.code, 'validation_failed');
  const fields = res.body.error.details.fields as Array<{ field: string; code: string }>;
  assert.ok(
    fields.some((f) => f.field === field && (!code || f.code === code)),
    `expected a field error on ${field}${code ? ` (${code})` : ''}, got ${JSON.stringify(fields)}`,
  );
}

export function expect403(res: Res, missing: string): void {
  assert.equal(res.status, 403, res.raw);
  assert.equal(res.body.error.code, 'forbidden');
  assert.deepEqual(res.body.error.details.missing, [missing]);
}

export function expect404(res: Res): void {
  assert.equal(res.status, 404, res.raw);
  assert.equal(res.body.error.code, 'not_found');
}

export function expect409(res: Res): void {
  assert.equal(res.status, 409, res.raw);
  assert.equal(res.body.error.code, 'conflict');
}

/** Every audit entry and event row of the org, serialised: for "never a secret" assertions. */
export async function auditAndEvents(t: TestApp, orgId: string): Promise<string> {
  const audit = await t.ctx.db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId).execute();
  const events = await t.ctx.db.selectFrom('events').selectAll().where('org_id', '=', orgId).execute();
  return JSON.stringify({ audit, events });
}

export async function eventsOf(t: TestApp, orgId: string, type: string) {
  const rows = await t.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('type', '=', type)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.data as unknown as Record<string, any>);
}

export async function auditOf(t: TestApp, orgId: string, action: string) {
  return t.ctx.db
    .selectFrom('audit_log')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('action', '=', action)
    .execute();
}
