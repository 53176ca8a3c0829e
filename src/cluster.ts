import cluster, { type Worker } from 'node:cluster';

/**
 * The primary of `WORKERS=n` (n > 1): it serves no request itself. serve.ts has already migrated
 * the database (once, here, before any fork) and checked the port; this forks the workers, which share the port (the
 * primary accepts and hands connections round-robin), replaces a worker that dies, and on SIGTERM
 * or SIGINT drains them all before it exits. A worker exits on its own when the primary dies
 * (Node closes the IPC channel; the worker runtime exits on that disconnect).
 */

/** A worker that lived less than this long before it died counts as a crash loop for the backoff. */
export const STABLE_WORKER_MS = 30_000;
const FIRST_RESTART_MS = 100;
const MAX_RESTART_MS = 10_000;
/** Past this, a draining worker that has not exited is killed (its own shutdown gives up at 15 s). */
const DRAIN_MS = 20_000;

/** Milliseconds before replacing a worker, after `quickExits` consecutive workers died young. */
export function restartDelay(quickExits: number): number {
  return Math.min(FIRST_RESTART_MS * 2 ** Math.max(0, quickExits - 1), MAX_RESTART_MS);
}

export interface PrimaryLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SuperviseOptions {
  workers: number;
  log: PrimaryLog;
  /** Once, when every worker of the first generation listens. */
  onReady(): void;
  /** A worker failed before the cluster was ready (it printed why): the others are told to stop. */
  onFailedStart(): void;
  /** After every worker has exited on a signal: close what the primary holds, then exit. */
  onStopped(signal: string, clean: boolean): void;
}

/** Forks and supervises the workers; see the file comment. */
export function superviseWorkers(opts: SuperviseOptions): void {
  const started = new Map<Worker, number>();
  let phase: 'starting' | 'ready' | 'stopping' = 'starting';
  let stopSignal = '';
  let quickExits = 0;

  const fork = () => started.set(cluster.fork(), Date.now());
  const killAll = (signal: NodeJS.Signals) => {
    for (const worker of started.keys()) worker.process.kill(signal);
  };

  const listening = new Set<Worker>();
  cluster.on('listening', (worker) => {
    if (phase !== 'starting') return;
    listening.add(worker);
    if (listening.size < opts.workers) return;
    phase = 'ready';
    opts.onReady();
  });

  cluster.on('exit', (worker, code, signal) => {
    const since = started.get(worker) ?? Date.now();
    started.delete(worker);
    if (phase === 'stopping') {
      if (started.size === 0) opts.onStopped(stopSignal, true);
      return;
    }
    if (phase === 'starting') {
      phase = 'stopping';
      killAll('SIGTERM');
      opts.onFailedStart();
      return;
    }
    quickExits = Date.now() - since < STABLE_WORKER_MS ? quickExits + 1 : 0;
    const delay = restartDelay(quickExits);
    opts.log.warn(
      { pid: worker.process.pid, code, signal, restartInMs: delay },
      'worker exited; starting another',
    );
    setTimeout(() => {
      if (phase !== 'stopping') fork();
    }, delay);
  });

  const stop = (signal: string) => {
    if (phase === 'stopping') return;
    phase = 'stopping';
    stopSignal = signal;
    opts.log.info({ signal, workers: started.size }, 'shutting down');
    if (started.size === 0) return opts.onStopped(signal, true);
    killAll('SIGTERM');
    setTimeout(() => {
      killAll('SIGKILL');
      opts.onStopped(signal, false);
    }, DRAIN_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < opts.workers; i++) fork();
}
