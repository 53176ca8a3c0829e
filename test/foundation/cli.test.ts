import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/index.js';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { freePort, waitForHttp } from '../helpers/net.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/gatehouse.mjs', import.meta.url).pathname;

/** The CLI against a running server: on the embedded database it goes through the server's socket. */
describe('gatehouse CLI with a running server', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess;
  let base: string;
  let schema: string | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    schema = process.env.DATABASE_URL ? `gh_cli_${randomAlphanumeric(8).toLowerCase()}` : undefined;
    env = {
      ...process.env,
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      ...(schema ? { DATABASE_SCHEMA: schema } : {}),
    };
    delete env.REDIS_URL;
    server = spawn(process.execPath, [BIN], { env, stdio: 'ignore' });
    await waitForHttp(`${base}/readyz`);
  });

  after(async () => {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    if (schema) {
      const h = await openDatabase(loadConfig({ ...env, DATA_DIR: dir } as never, () => {}));
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(h.db);
      await h.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrate reports the database up to date', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'migrate'], { env });
    assert.match(stdout, /up to date/);
  });

  it('admin grant and revoke change system permissions, by username', async () => {
    const id = `usr_${randomAlphanumeric(10)}`;
    const uname = `cli-${randomAlphanumeric(6).toLowerCase()}`;
    // Insert the user through the same path the CLI uses, while the server runs.
    const h = await openDatabase(
      loadConfig(env as never, () => {}),
      { preferSocket: true },
    );
    await h.db
      .insertInto('users')
      .values({
        id,
        username: uname,
        last_seen: new Date(),
        created_at: new Date(),
        updated_at: new Date(),
        deleted_at: null,
      } as never)
      .execute();
    await h.close();

    const granted = await run(process.execPath, [BIN, 'admin', 'grant', uname, 'AdminPermission.OrgsView'], {
      env,
    });
    assert.match(granted.stdout, /granted admin\.orgs\.view/);
    const all = await run(process.execPath, [BIN, 'admin', 'grant', id], { env });
    assert.match(all.stdout, /admin\.users\.view/);

    const h2 = await openDatabase(
      loadConfig(env as never, () => {}),
      { preferSocket: true },
    );
    const perms = await h2.db
      .selectFrom('system_permissions')
      .select('permission')
      .where('user_id', '=', id)
      .execute();
    assert.deepEqual(perms.map((p) => p.permission).sort(), [
      'admin.orgs.edit',
      'admin.orgs.view',
      'admin.users.view',
    ]);
    await run(process.execPath, [BIN, 'admin', 'revoke', id, 'admin.orgs.edit'], { env });
    const left = await h2.db
      .selectFrom('system_permissions')
      .select('permission')
      .where('user_id', '=', id)
      .execute();
    assert.deepEqual(left.map((p) => p.permission).sort(), ['admin.orgs.view', 'admin.users.view']);
    await h2.close();
  });

  it('refuses an unknown user or permission with exit code 2', async () => {
    await assert.rejects(
      run(process.execPath, [BIN, 'admin', 'grant', 'nobody-here'], { env }),
      (e: { code: number; stderr: string }) => {
        assert.equal(e.code, 2);
        assert.match(e.stderr, /no user found/);
        return true;
      },
    );
    await assert.rejects(
      run(process.execPath, [BIN, 'admin', 'grant', 'x', 'admin.everything'], { env }),
      (e: { code: number }) => e.code === 2,
    );
  });

  it('keys rotate takes effect on the running server', async () => {
    const before = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    const { stdout } = await run(process.execPath, [BIN, 'keys', 'rotate'], { env });
    const kid = /new signing key (\S+)/.exec(stdout)?.[1];
    assert.ok(kid);
    await new Promise((r) => setTimeout(r, 1100)); // the server rereads the key set at most once a second
    const afterRotate = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    assert.deepEqual(
      afterRotate.keys.map((k) => k.kid).sort(),
      [...before.keys.map((k) => k.kid), kid].sort(),
    );
  });
});
