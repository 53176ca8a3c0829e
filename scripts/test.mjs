// Runs every test/**/*.test.ts with node:test (Node 20 has no glob support in --test).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return find(p);
    return p.endsWith('.test.ts') ? [p] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// No --test-force-exit: it ends a file's process with process.exit() as soon as its tests are done,
// and whatever of the file's report was still queued for the pipe to this runner is lost. On a loaded
// machine that cut files short: the runner saw 1 of audit-log's 10 tests and a failed file, or 18 of
// siws's 26 tests and no failure at all. Every file closes what it opens, so each ends by itself. A
// file that does not (a server left listening) would hold the run open: the whole run is bounded
// instead, and a run killed at the bound fails, naming the bound.
const limitMinutes = Number(process.env.TEST_RUN_LIMIT_MINUTES) || 40;
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', timeout: limitMinutes * 60_000, killSignal: 'SIGKILL' },
);
if (r.error || r.signal) {
  console.error(
    `test run ended by ${r.signal ?? r.error?.message} after the ${limitMinutes}-minute bound (TEST_RUN_LIMIT_MINUTES): a file did not end (a handle left open?)`,
  );
}
process.exit(r.status ?? 1);
