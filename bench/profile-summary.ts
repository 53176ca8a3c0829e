/**
 * Top self-time functions of a V8 CPU profile (`--cpu-prof`), grouped by function and file:
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [top=20] [function]
 * With a function name (e.g. `signOneShot` for the token endpoint), only the samples from that
 * function's first to its last sample count: the load of a benchmark without the start-up (schema
 * compilation, module loading) and the idle time while the peer server is measured.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, topArg, windowArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));

// Sample i covers [at[i], at[i] + dt[i]) (µs from the start).
const dt = profile.samples.map((_, i) => profile.timeDeltas[i + 1] ?? 0);
const at: number[] = [];
profile.samples.reduce((t, _, i) => {
  at.push(t);
  return t + dt[i];
}, 0);
let from = 0;
let to = profile.samples.length;
if (windowArg) {
  const marks = profile.samples.flatMap((id, i) =>
    byId.get(id)?.callFrame.functionName === windowArg ? [i] : [],
  );
  if (marks.length === 0) throw new Error(`no sample of ${windowArg}`);
  from = marks[0];
  to = (marks.at(-1) ?? from) + 1;
  console.log(
    `samples from the first to the last of ${windowArg}: ${(at[from] / 1e6).toFixed(1)} s to ${(at[to - 1] / 1e6).toFixed(1)} s`,
  );
}
const self = new Map<string, number>();
let total = 0;
for (let i = from; i < to; i++) {
  const n = byId.get(profile.samples[i]);
  total += dt[i];
  if (!n) continue;
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${url}${url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  self.set(key, (self.get(key) ?? 0) + dt[i]);
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 20));
for (const [key, us] of rows) console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
