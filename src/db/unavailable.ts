import { resultTypeChanged } from './prepared.js';

/**
 * Errors that mean "the database cannot be reached right now" (down, restarting, refusing
 * connections, the network cut; or, once per connection, a prepared statement a migration
 * invalidated), as opposed to a bad query. Requests failing this way answer 503
 * `service_unavailable`; the pool reconnects by itself once the database is back.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** SQLSTATE: admin/crash shutdown, cannot connect now, and class 08 (connection exception). */
const SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  // A prepared statement a migration invalidated inside a transaction: prepared afresh on next use.
  if (resultTypeChanged(err)) return true;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] };
  if (
    typeof e.code === 'string' &&
    (NETWORK_CODES.has(e.code) || SQLSTATES.has(e.code) || e.code.startsWith('08'))
  )
    return true;
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError
  return typeof e.message === 'string' && MESSAGES.some((m) => (e.message as string).includes(m));
}

/**
 * Why a start could not use DATABASE_URL, in a few words (for the one-line configuration error), or
 * undefined when `err` is not about reaching the database.
 */
export function unreachableDatabase(err: unknown): string | undefined {
  const e = err as { code?: string; message?: string; errors?: Array<{ code?: string }> };
  const code = e?.code ?? e?.errors?.[0]?.code;
  if (code === '3D000') return `names a database that does not exist (${e.message})`;
  if (code === '28P01' || code === '28000') return `was refused by the server: ${e.message}`;
  if (code === '3F000') return `schema does not exist: ${e.message}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host cannot be resolved (${code})`;
  if (isDatabaseUnavailable(err)) return `cannot be reached (${code ?? e?.message ?? 'no answer'})`;
  return undefined;
}
