import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { defaults } from '../../src/config/defaults.js';
import { ManualClock } from '../../src/lib/clock.js';
import { webhookWorker } from '../../src/modules/webhooks/webhooks.routes.js';
import { buildTestApp, createUser, type TestApp } from '../helpers/app.js';
import { seedOrg } from '../helpers/fixtures.js';
import { basicAuth, createApp, createBrand } from '../helpers/oidc.js';
import { BASE_URL, Instance, ROOT, runEnv, storesOrSkip } from './cluster.js';

function cli(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/gatehouse.mjs', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`gatehouse ${args.join(' ')}: ${code} ${out}`)),
    );
  });
}

async function token(i: Instance, clientId: string, secret: string): Promise<Response> {
  return i.fetch('/oauth2/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...basicAuth(clientId, secret) },
    body: 'grant_type=client_credentials&scope=orders%3Aread',
  });
}

/**
 * `gatehouse keys rotate` and a client-secret rotation while two instances issue tokens: every token
 * verifies against the JWKS of either instance at once (no token signed by a key a verifier cannot
 * find), and the old secret is refused on both instances as soon as the rotation answers.
 */
describe('chaos: key and client-secret rotation across two instances', { timeout: 180_000 }, () => {
  let t: TestApp | undefined;
  const instances: Instance[] = [];
  after(async () => {
    for (const i of instances) await i.stop().catch(() => {});
    await t?.close();
  });

  it('never hands out a token signed by a key the other instance does not publish', async (tc) => {
    if (!storesOrSkip(tc)) return;
    const env = runEnv();
    t = await buildTestApp({ env, clock: new ManualClock() });
    await webhookWorker(t.ctx).stop();
    const owner = await createUser(t);
    const org = await seedOrg(t, owner);
    const brand = await createBrand(t, { orgId: org.id });
    const client = await createApp(t, brand, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const a = await Instance.start('A', env);
    instances.push(a);
    const b = await Instance.start('B', env);
    instances.push(b);

    const kids = new Set<string>();
    const unknown: string[] = [];
    let issued = 0;
    let rotated = false;
    let afterRotation = 0;
    let rotatedAt = 0;
    const loop = async () => {
      // Until well after the new key signs (keyActivationDelayMs), with both instances serving.
      while (
        !rotated ||
        afterRotation < 20 ||
        Date.now() - rotatedAt < defaults.keyActivationDelayMs + 2000
      ) {
        const [issuer, verifier] = issued % 2 === 0 ? [a, b] : [b, a];
        const res = await token(issuer, client.clientId, client.clientSecret as string);
        assert.equal(res.status, 200, await res.clone().text());
        const { access_token } = (await res.json()) as { access_token: string };
        issued++;
        if (rotated) afterRotation++;
        const { kid } = decodeProtectedHeader(access_token);
        kids.add(String(kid));
        // A resource server fetching the key set from whichever instance the load balancer picks.
        const jwks = (await (await verifier.fetch('/.well-known/jwks.json')).json()) as {
          keys: Array<{ kid: string }>;
        };
        try {
          await jwtVerify(access_token, createLocalJWKSet(jwks as never), { issuer: BASE_URL });
        } catch (e) {
          unknown.push(
            `${kid} from ${issuer.name}, not in ${verifier.name}'s JWKS (${(e as Error).message})`,
          );
        }
      }
    };
    const running = loop();
    await new Promise((r) => setTimeout(r, 500));
    await cli(['keys', 'rotate'], env);
    rotatedAt = Date.now();
    rotated = true;
    await running;
    assert.ok(kids.size >= 2, `tokens were signed with the new key too (${[...kids].join(', ')})`);
    assert.deepEqual(unknown, [], 'every token verifies against either instance’s JWKS');
    tc.diagnostic(`${issued} tokens, ${kids.size} keys, none signed by a key missing from a JWKS`);
  });

  it('refuses the old client secret on both instances as soon as the rotation answers', async (tc) => {
    if (!storesOrSkip(tc) || !t) return;
    const [a, b] = instances;
    const owner = await createUser(t);
    const org = await seedOrg(t, owner);
    const brand = await createBrand(t, { orgId: org.id });
    const client = await createApp(t, brand, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const old = client.clientSecret as string;
    // Both instances have the client cached.
    assert.equal((await token(a, client.clientId, old)).status, 200);
    assert.equal((await token(b, client.clientId, old)).status, 200);
    const rotated = await a.fetch(
      `/identity/organizations/${org.slug}/brands/${brand.slug}/apps/${client.clientId}/rotate-secret`,
      {
        method: 'POST',
        headers: owner.auth,
      },
    );
    assert.equal(rotated.status, 200, await rotated.clone().text());
    const { clientSecret } = (await rotated.json()) as { clientSecret: string };
    const results = {
      oldOnA: (await token(a, client.clientId, old)).status,
      oldOnB: (await token(b, client.clientId, old)).status,
      newOnA: (await token(a, client.clientId, clientSecret)).status,
      newOnB: (await token(b, client.clientId, clientSecret)).status,
    };
    assert.deepEqual(results, { oldOnA: 401, oldOnB: 401, newOnA: 200, newOnB: 200 });
  });
});
