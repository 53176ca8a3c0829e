/** The REST error envelope: `{ error: { code, message, details? } }`. */
export interface ErrorEnvelope {
  error?: {
    code?: string;
    message?: string;
    details?: {
      fields?: { field: string; code?: string; message: string }[];
      missing?: string | string[];
      [k: string]: unknown;
    };
  };
}

/** An API failure, with what the UI shows: a message, messages per field, and missing permissions. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Record<string, string>,
    readonly missing: string[],
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * Field names in `details.fields` come as `name`, `/name`, `body.name` or `body/redirectUris/0`; the
 * form field is the first segment after the body prefix.
 */
export function fieldKey(field: string): string {
  const parts = field
    .replace(/^\/+/, '')
    .split(/[./[\]]+/)
    .filter(Boolean);
  if (parts[0] === 'body' && parts.length > 1) parts.shift();
  if (parts[0] === 'config' && parts.length > 1) parts.shift();
  return parts[0] ?? field;
}

export function toProblem(status: number, body: unknown): ApiProblem {
  const env = (body ?? {}) as ErrorEnvelope;
  const err = env.error ?? {};
  const details = err.details ?? {};
  const fields: Record<string, string> = {};
  for (const f of details.fields ?? []) {
    const key = fieldKey(f.field);
    if (!fields[key]) fields[key] = f.message;
  }
  const missing =
    details.missing === undefined ? [] : Array.isArray(details.missing) ? details.missing : [details.missing];
  const message =
    err.message ??
    (status === 0 ? 'The service could not be reached.' : `The request failed (HTTP ${status}).`);
  return new ApiProblem(status, err.code ?? 'unknown', message, fields, missing, details);
}

/** The sentence shown next to a disabled action: which permission the user lacks. */
export function missingReason(missing: string[]): string {
  if (missing.length === 0) return 'You do not have permission to do this.';
  return `Needs the permission ${missing.join(', ')}.`;
}
