import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { listMigrations } from '../../src/db/migrate.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { freePort } from '../helpers/net.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const KEY = Buffer.alloc(32, 9).toString('base64');

/** Runs the server entry point with `env` until it exits; its exit code and output. */
function runToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ENCRYPTION_KEY: KEY, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running: ${stdout}${stderr}`));
    }, 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function alive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('configuration errors at start', () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      'NODE_ENV=prod',
      { NODE_ENV: 'prod' },
      /^Invalid configuration: NODE_ENV must be one of development, test, production/,
    ],
    ['LOG_REQUESTS=some', { LOG_REQUESTS: 'some' }, /^Invalid configuration: LOG_REQUESTS /],
    [
      'METRICS_PORT = PORT',
      { PORT: '3456', METRICS_PORT: '3456' },
      /^Invalid configuration: METRICS_PORT must differ from PORT/,
    ],
    ['a bad PORT', { PORT: 'http' }, /^Invalid configuration: PORT /],
    [
      'WORKERS=2 on the embedded database',
      { WORKERS: '2' },
      /^Invalid configuration: WORKERS must be 1 with the embedded database/,
    ],
  ];
  for (const [name, env, line] of cases) {
    it(`${name}: one line naming the variable, exit status 1`, async () => {
      const r = await runToExit({ DATA_DIR: '/nonexistent-gatehouse-start', ...env });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, line);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    });
  }

  it('an unreachable DATABASE_URL: one line naming it, no stack', async () => {
    const port = await freePort();
    const r = await runToExit({
      DATABASE_URL: `postgres://gatehouse@127.0.0.1:${port}/gatehouse`,
      LOG_LEVEL: 'silent',
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^Invalid configuration: DATABASE_URL cannot be reached \(ECONNREFUSED\)/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  it('a DATABASE_URL naming a database that does not exist: one line naming it', async (t) => {
    if (!process.env.DATABASE_URL) return t.skip('needs DATABASE_URL');
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/gh_missing_${randomAlphanumeric(8).toLowerCase()}`;
    const r = await runToExit({ DATABASE_URL: url.toString() });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^Invalid configuration: DATABASE_URL names a database that does not exist/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });
});

describe('npm start', () => {
  it('logs each migration and one ready line, and SIGTERM to npm leaves no process behind', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-start-'));
    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ENCRYPTION_KEY: KEY,
      NODE_ENV: 'production',
    };
    if (process.env.DATABASE_URL) {
      env.DATABASE_URL = process.env.DATABASE_URL;
      env.DATABASE_SCHEMA = `gh_start_${randomAlphanumeric(8).toLowerCase()}`;
    }
    // Its own process group, so the test can see whether anything of it survives.
    const npm: ChildProcess = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, detached: true });
    let out = '';
    npm.stdout?.on('data', (d) => (out += d));
    npm.stderr?.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => npm.on('exit', (code) => r(code)));
    try {
      await until(() => out.includes('gatehouse ready'), 120_000, `the ready line (${out})`);
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const migrations = lines.filter((l) => l.msg === 'migration applied');
      assert.deepEqual(
        migrations.map((l) => l.version),
        listMigrations().map((m) => m.version),
      );
      const ready = lines.filter((l) => l.msg === 'gatehouse ready');
      assert.equal(ready.length, 1);
      assert.equal(ready[0].issuer, `http://localhost:${port}`);
      assert.equal(ready[0].console, `http://localhost:${port}/console`);
      assert.equal(ready[0].docs, `http://localhost:${port}/docs`);
      assert.ok(!out.includes('Server listening'), out);
      // A request is one line; a probe none.
      await fetch(`http://127.0.0.1:${port}/healthz`);
      await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`);
      await until(() => out.includes('"route":"/.well-known/jwks.json"'), 10_000, 'the request line');
      assert.ok(!out.includes('healthz'), out);

      process.kill(npm.pid as number, 'SIGTERM');
      await exited;
      await until(() => !alive(npm.pid as number), 20_000, 'every process of npm start to end');
      assert.match(out, /"signal":"SIGTERM".*"shutting down"/);
    } finally {
      if (alive(npm.pid as number)) process.kill(-(npm.pid as number), 'SIGKILL');
      if (env.DATABASE_SCHEMA) {
        const { default: pg } = await import('pg');
        const c = new pg.Client({ connectionString: env.DATABASE_URL });
        await c.connect();
        await c.query(`drop schema if exists ${env.DATABASE_SCHEMA} cascade`);
        await c.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
