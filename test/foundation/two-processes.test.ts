import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { freePort, waitForHttp } from '../helpers/net.js';
import { brandUrl, call, createBrand } from '../brands/setup.js';

const BIN = new URL('../../bin/gatehouse.mjs', import.meta.url).pathname;
/** The test helper's encryption key: both instances must open the same sealed signing keys. */
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * The outside review's setup: two server processes on one PostgreSQL (no shared memory, so nothing
 * in-process can stand in for the invalidation channel). Instance A (in this process) rotates a
 * client secret; instance B (a child process, over real HTTP) must refuse the old secret at once,
 * not when its client cache entry expires (5 s). PostgreSQL only: the embedded database is one
 * process's.
 */
describe('a rotated client secret, across two processes on PostgreSQL', {
  skip: !process.env.DATABASE_URL,
}, () => {
  let a: TestApp;
  let child: ChildProcess;
  let base: string;
  let owner: TestUser;
  let org: TestOrg;
  let brand: { slug: string };

  before(async () => {
    a = await buildTestApp();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      DATA_DIR: '/nonexistent-gatehouse-two-processes',
      LOG_LEVEL: 'silent',
      ENCRYPTION_KEY,
      DATABASE_SCHEMA: a.ctx.config.databaseSchema,
      REDIS_PREFIX: a.ctx.config.redisPrefix,
    };
    child = spawn(process.execPath, [BIN], { env, stdio: 'ignore' });
    await waitForHttp(`${base}/readyz`);
    owner = await createUser(a);
    org = await seedOrg(a, owner);
    brand = await createBrand(a, owner, org);
    const scope = await call(a, owner, 'POST', `${brandUrl(org, brand.slug)}/scopes`, {
      name: 'orders:read',
      description: 'Read orders',
    });
    assert.equal(scope.status, 201, scope.raw);
  });

  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await a?.close();
  });

  const tokenAtB = async (clientId: string, secret: string) =>
    (
      await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: secret,
          scope: 'orders:read',
        }),
      })
    ).status;

  it('B refuses the old secret on its next request after the rotation on A', async () => {
    const created = await call(a, owner, 'POST', `${brandUrl(org, brand.slug)}/apps`, {
      name: 'Service',
      type: 'm2m',
      isConfidential: true,
      redirectUris: [],
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders:read'],
    });
    assert.equal(created.status, 201, created.raw);
    const { clientId, clientSecret } = created.body;
    assert.equal(await tokenAtB(clientId, clientSecret), 200, 'B has the client cached');
    const rotated = await call(
      a,
      owner,
      'POST',
      `${brandUrl(org, brand.slug)}/apps/${clientId}/rotate-secret`,
    );
    assert.equal(rotated.status, 200, rotated.raw);
    // NOTIFY reaches B asynchronously; allow it the time of a few requests, far below the 5 s a
    // cache entry lives (which is what answered 200 before the fix).
    const started = Date.now();
    let status = await tokenAtB(clientId, clientSecret);
    while (status === 200 && Date.now() - started < 500) status = await tokenAtB(clientId, clientSecret);
    assert.equal(status, 401, `the old secret still worked on B ${Date.now() - started} ms after rotation`);
    assert.equal(await tokenAtB(clientId, rotated.body.clientSecret), 200);
  });
});
