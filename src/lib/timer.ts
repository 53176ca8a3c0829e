export interface Schedule {
  /** Between two runs (milliseconds). */
  everyMs: number;
  /** Before the first run (default `everyMs`). */
  firstMs?: number;
}

export interface ScheduledJob {
  /** Resolves when no run is in flight (tests step the timers and wait for the run they caused). */
  idle(): Promise<void>;
  /** Clears the timers, then waits for a run in flight, so the database never closes under it. */
  stop(): Promise<void>;
}

/**
 * The one timer of background work (src/jobs schedules every job with it): runs `run` on
 * `schedule`, never two runs at once (a run still going when the next is due is skipped), errors to
 * `onError` (the next run retries). The timers are Node's, unref'd so they never hold the process
 * open (tests step them with `mock.timers`); the work itself reads the time from `ctx.clock`.
 */
export function every(
  schedule: Schedule,
  run: () => Promise<unknown>,
  onError: (err: unknown) => void,
): ScheduledJob {
  let current: Promise<void> | null = null;
  const tick = () => {
    current ??= run()
      .then(() => undefined)
      .catch(onError)
      .finally(() => {
        current = null;
      });
  };
  const first = schedule.firstMs === undefined ? undefined : setTimeout(tick, schedule.firstMs);
  const repeating = setInterval(tick, schedule.everyMs);
  first?.unref();
  repeating.unref();
  return {
    idle: async () => void (await current),
    async stop() {
      clearTimeout(first);
      clearInterval(repeating);
      await current;
    },
  };
}
