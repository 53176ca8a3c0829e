import { ApiError } from '../http/errors.js';

/**
 * Unique and foreign-key violations mapped by constraint name to the interface's `conflict`.
 * Modules register their constraints here so that "the database decides" and the API still answers
 * with a clear message. Never check-then-insert.
 */
const constraintMessages = new Map<string, string>([
  ['users_username_key', 'username already in use'],
  ['orgs_slug_key', 'an organization with this slug exists or the slug is reserved'],
  ['roles_org_name_key', 'a role with this name exists in this organization'],
  ['brands_org_slug_key', 'a brand with this slug exists in this organization'],
  ['apps_client_id_key', 'client id already in use'],
]);

export function registerConstraint(name: string, message: string): void {
  constraintMessages.set(name, message);
}

interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
}

/** Turns a database error into an ApiError when it is a known constraint; rethrows otherwise. */
export function mapDbError(err: unknown): never {
  const e = err as PgError;
  if (e && (e.code === '23505' || e.code === '23503') && e.constraint) {
    const message = constraintMessages.get(e.constraint);
    if (message) throw new ApiError(409, 'conflict', message, { constraint: e.constraint });
  }
  throw err;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as PgError;
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}
