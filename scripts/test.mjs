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
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    // A file whose tests are done but whose after-hook failed (a server left listening) ends at once
    // and counts as failed, instead of keeping the run alive until CI's time limit.
    '--test-force-exit',
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
