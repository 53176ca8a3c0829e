import type { FastifyBaseLogger } from 'fastify';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
const VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};
const noop = () => {};

type Bindings = Record<string, unknown>;

/**
 * Fastify makes a pino child logger (with the request id) for every request, whether or not the
 * request ever logs; that is a fifth of the cost of a cached discovery reply. This factory hands out
 * a small stand-in instead: levels below the configured one are no-ops, and the real child is made
 * on the first line actually logged, with the same bindings.
 */
export function lazyChildLoggerFactory(level: string) {
  const threshold = VALUES[level] ?? VALUES.info;

  class LazyChildLogger {
    private real: FastifyBaseLogger | undefined;
    constructor(
      private readonly parent: FastifyBaseLogger,
      private readonly bindings: Bindings,
      private readonly opts: object,
    ) {}
    private logger(): FastifyBaseLogger {
      if (!this.real) this.real = this.parent.child(this.bindings, this.opts);
      return this.real;
    }
    get level(): string {
      return this.parent.level;
    }
    child(bindings: Bindings, opts?: object): FastifyBaseLogger {
      return this.logger().child(bindings, opts);
    }
    silent(): void {}
  }
  const proto = LazyChildLogger.prototype as unknown as Record<string, unknown>;
  for (const l of LEVELS) {
    proto[l] =
      VALUES[l] >= threshold
        ? function log(this: { logger(): FastifyBaseLogger }, ...args: unknown[]) {
            return (this.logger()[l] as (...a: unknown[]) => void)(...args);
          }
        : noop;
  }

  return (logger: FastifyBaseLogger, bindings: Bindings, opts: object) =>
    new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
