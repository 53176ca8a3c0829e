import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from './lib/problems.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads data for a screen; `deps` decide when to load again. Stale answers are dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiProblem>();
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const run = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine !== seq.current) return;
      setData(value);
      setError(undefined);
    } catch (e) {
      if (mine !== seq.current) return;
      setError(e instanceof ApiProblem ? e : new ApiProblem(0, 'unknown', String(e), {}, [], {}));
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, loading, reload: run };
}

/** A form submission: busy flag, the last problem, and a runner that records both. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const run = useCallback(async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setProblem(undefined);
    try {
      return await fn();
    } catch (e) {
      setProblem(e instanceof ApiProblem ? e : new ApiProblem(0, 'unknown', String(e), {}, [], {}));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, problem, run, clear: () => setProblem(undefined) };
}

export interface Availability {
  value: string;
  available: boolean;
  reason?: string;
}

/**
 * Asks the API whether `value` is free as the user types, after a pause; `null` until the answer
 * for the current value arrives (or when `active` is false: empty, unchanged or badly formed).
 */
export function useAvailability(
  value: string,
  active: boolean,
  check: (value: string) => Promise<{ available: boolean; reason?: string }>,
): Availability | null {
  const [answer, setAnswer] = useState<Availability | null>(null);
  useEffect(() => {
    if (!active) return;
    let live = true;
    const timer = setTimeout(() => {
      check(value)
        .then((r) => live && setAnswer({ value, available: r.available, reason: r.reason }))
        .catch(() => undefined);
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [value, active]);
  return active && answer?.value === value ? answer : null;
}
