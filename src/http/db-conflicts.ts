import { ApiError } from './errors.js';

/**
 * Unique and foreign-key violations mapped by constraint name to the interface's `conflict`, so
 * that "the database decides" and the API still answers with a clear message. Never
 * check-then-insert: add the constraint's name here and wrap the write with `.catch(mapDbError)`.
 */
const CONSTRAINT_MESSAGES: ReadonlyMap<string, string> = new Map([
  ['users_username_key', 'username already in use'],
  ['orgs_slug_key', 'an organization with this slug exists or the slug is reserved'],
  ['roles_org_name_key', 'a role with this name exists in this organization'],
  ['brands_org_slug_key', 'a brand with this slug exists in this organization'],
  // Brand slugs are unique across the service (migration 0011): the slug is the token audience.
  ['brands_slug_key', 'a brand with this slug exists (brand slugs are unique across the service)'],
  ['apps_client_id_key', 'client id already in use'],
  // Deleting a role that a member holds fails on this foreign key: no check-then-delete.
  ['member_roles_role_id_fkey', 'the role is held by at least one member'],
  ['brand_scopes_brand_name_key', 'a scope with this name exists in this brand'],
  // Deleting a gate that a gate policy's rule names fails on this foreign key (DESIGN §3).
  ['gate_policy_gates_gate_fkey', 'the token gate is used by a gate policy'],
  // Deleting a gate policy that a scope or an app names fails on these foreign keys (DESIGN §3).
  ['brand_scopes_gate_policy_fkey', 'the gate policy is named by a scope'],
  ['apps_required_gate_policy_fkey', 'the gate policy is required by an app'],
  ['webhooks_org_url_events_key', 'a webhook with this URL and these events already exists'],
]);

interface PgError {
  code?: string;
  constraint?: string;
}

/** Turns a database error into a 409 ApiError when it is a known constraint; rethrows otherwise. */
export function mapDbError(err: unknown): never {
  const e = err as PgError;
  if (e && (e.code === '23505' || e.code === '23503') && e.constraint) {
    const message = CONSTRAINT_MESSAGES.get(e.constraint);
    if (message) throw new ApiError(409, 'conflict', message, { constraint: e.constraint });
  }
  throw err;
}
