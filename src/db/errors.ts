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

/**
 * SQLSTATEs meaning PostgreSQL refused a value the request carried (a NUL or an unencodable
 * character, a number out of its column's range, text too long for a column or an index entry),
 * not a fault of the service. The schema rule in src/http/input-rules.ts refuses these first; this
 * list is the backstop for whatever a schema misses.
 */
const BAD_VALUE_STATES = new Set([
  '22001', // string_data_right_truncation
  '22003', // numeric_value_out_of_range
  '22007', // invalid_datetime_format
  '22008', // datetime_field_overflow
  '22021', // character_not_in_repertoire (a NUL in text)
  '22026', // string_data_length_mismatch
  '22P02', // invalid_text_representation
  '22P05', // untranslatable_character (a \u0000 in jsonb)
  '54000', // program_limit_exceeded (an index entry too large)
]);

/** True when `err` is PostgreSQL refusing a value the caller sent (see BAD_VALUE_STATES). */
export function isBadValueError(err: unknown): err is PgError & { code: string } {
  const code = (err as PgError | null)?.code;
  return typeof code === 'string' && BAD_VALUE_STATES.has(code);
}
