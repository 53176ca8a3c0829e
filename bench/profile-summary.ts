/**
 * Top self-time functions of a V8 CPU profile (`--cpu-prof`), grouped by function and file:
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [top=20]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const n = byId.get(id);
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  if (!n) return;
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${url}${url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  self.set(key, (self.get(key) ?? 0) + dt);
});
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 20));
for (const [key, us] of rows) console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
