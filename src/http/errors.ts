/** A REST error: rendered as `{ error: { code, message, details? } }` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);
export const forbidden = (missing: string | string[], message = 'missing permission') =>
  new ApiError(403, 'forbidden', message, { missing: Array.isArray(missing) ? missing : [missing] });
export const unauthorized = (message = 'authentication required') =>
  new ApiError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer' });
export const invalidToken = (message = 'the access token is invalid') =>
  new ApiError(401, 'invalid_token', message, undefined, {
    'www-authenticate': 'Bearer error="invalid_token"',
  });
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError(409, 'conflict', message, details);
export const unprocessable = (message: string, details?: Record<string, unknown>) =>
  new ApiError(422, 'unprocessable_entity', message, details);

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/** 400 (or 422 where the interface says so) `validation_failed` with `details.fields`. */
export const validationFailed = (fields: FieldError[], status = 400, message = 'request validation failed') =>
  new ApiError(status, 'validation_failed', message, { fields });

/**
 * An OAuth 2.0 error: rendered as `{ error, error_description }`. `status` follows DESIGN.md §4
 * (400, `invalid_client` 401). `redirectable` is false for errors about the client or redirect URI.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
    readonly headers?: Record<string, string>,
  ) {
    super(description);
  }
}
