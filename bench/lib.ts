/** Small helpers shared by the benchmark scripts. */
export { freePort, waitForHttp } from '../test/helpers/net.js';

/** `--name <number>` from the command line, or `def`. */
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

/** The p-th percentile of an ascending array (nearest rank). */
export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
