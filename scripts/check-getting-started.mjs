// Checks docs/getting-started.md as a new user meets it: a fresh clone of this repository's HEAD in a
// temporary folder, `npm ci`, `npm start` on a free port, then every ```sh block of the guide in
// order in one bash (its localhost:3000 pointed at that port), then the server stopped and the
// clone removed. Exit code 0 when every command succeeded. Slow (npm ci): run it by hand, not in CI;
// test/docs/getting-started.test.ts runs the same commands against the working tree on every CI run.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'gs-check-'));
const clone = join(dir, 'gatehouse');
const step = (what) => console.error(`== ${what}`);

const srv = createServer();
await new Promise((r) => srv.listen(0, '127.0.0.1', r));
const port = srv.address().port;
await new Promise((r) => srv.close(r));

let server;
let code = 1;
try {
  step(
    `git clone ${repo} (HEAD ${execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD']).toString().trim()})`,
  );
  execFileSync('git', ['clone', '-q', repo, clone], { stdio: 'inherit' });
  step('npm ci');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: clone,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  step(`PORT=${port} npm start`);
  const env = { ...process.env, PORT: String(port) };
  for (const k of ['BASE_URL', 'DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'NODE_ENV']) delete env[k];
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: clone, env, stdio: 'ignore' });
  for (let i = 0; ; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('the server did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const guide = readFileSync(join(clone, 'docs/getting-started.md'), 'utf8');
  const blocks = [...guide.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  step(`${blocks.length} blocks of docs/getting-started.md, each command echoed`);
  const script = ['set -euo pipefail', 'set -x', ...blocks]
    .join('\n')
    .replaceAll('localhost:3000', `localhost:${port}`);
  code = spawnSync('bash', ['-c', script], { cwd: clone, env, stdio: 'inherit' }).status ?? 1;
} finally {
  server?.kill('SIGTERM');
  if (server) await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
step(code === 0 ? 'the guide works on a fresh clone' : `the guide failed (exit ${code})`);
process.exit(code);
