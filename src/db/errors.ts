interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
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
