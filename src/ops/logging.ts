import pino, { type Logger } from 'pino';
import type { Config } from '../config/index.js';

/** Never written to a log: credentials in headers, and secret-bearing fields of any logged object. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.client_secret',
  '*.clientSecret',
  '*.secret',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.code',
  '*.config',
  '*.key',
  '*.password',
];

/**
 * The process logger: pino at LOG_LEVEL, JSON lines on stdout through pino's asynchronous
 * destination (a write never blocks a request; pino flushes what is buffered when the process
 * exits), or to `stream` when given (tests read the lines).
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  stream?: { write(line: string): void },
): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: {
        // Paths only: query strings can carry codes, user codes or provider data.
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: req.url.split('?')[0],
          remoteAddress: req.ip,
        }),
        err: pino.stdSerializers.err,
      },
    },
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}
