// Runs every test/**/*.test.ts with node:test (Node 20 has no glob support in --test).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { crashedFiles } from './test-crashes.mjs';

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

/** Runs node:test on `list`, its output shown as it comes and kept; resolves status and output. */
function run(list) {
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...list],
      { stdio: ['inherit', 'pipe', 'pipe'] },
    );
    const keep = (to) => (chunk) => {
      to.write(chunk);
      chunks.push(chunk);
    };
    // A runner that cannot start is a failed run ('close' follows with no exit code), said in one line.
    child.on('error', (err) => console.error(`test run could not start: ${err.message}`));
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    const bound = setTimeout(() => {
      console.error(
        `test run ended by SIGKILL after the ${limitMinutes}-minute bound (TEST_RUN_LIMIT_MINUTES): a file did not end (a handle left open?)`,
      );
      child.kill('SIGKILL');
    }, limitMinutes * 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ status: signal ? 1 : (code ?? 1), output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

const first = await run(files);
let status = first.status;
// A file whose process the JavaScript engine itself aborted, with no test of it failing, runs once
// more (scripts/test-crashes.mjs says exactly when); a failing test is never re-run.
const crashed = status === 0 ? [] : crashedFiles(first.output);
if (crashed.length > 0) {
  console.error(
    `\nre-running ${crashed.length} file(s) that V8 aborted with no failing test: ${crashed.join(', ')}`,
  );
  status = (await run(crashed)).status;
}
process.exit(status);
