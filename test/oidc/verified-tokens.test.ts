import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/lib/clock.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type SeededClient, seedClient } from '../helpers/signin.js';
import { clientCredentialsToken } from '../users/flow.js';

/**
 * The per-instance memory of verified access tokens (src/oidc/tokens.ts `verifiedClaims`): a
 * repeated token skips its signature check, and nothing a fresh check would refuse is accepted.
 */
let t: TestApp;
let clock: ManualClock;
let client: SeededClient;
/** How many times the verifier looked up a public key: once per signature actually checked. */
let keyLookups = 0;

before(async () => {
  clock = new ManualClock(Date.now());
  t = await buildTestApp({ clock });
  client = await seedClient(t, { confidential: true, grantTypes: ['client_credentials'] });
  const lookup = t.ctx.keys.verificationKey.bind(t.ctx.keys);
  t.ctx.keys.verificationKey = (kid) => {
    keyLookups++;
    return lookup(kid);
  };
});
after(() => t.close());

/** Verifies `token` (optionally for `audience`); the claims or null, and whether a signature was checked. */
async function verify(token: string, audience?: string) {
  const before = keyLookups;
  const claims = await t.ctx.verifyAccessToken(token, audience === undefined ? undefined : { audience });
  return { claims, checked: keyLookups > before };
}

describe('verified access tokens', () => {
  test('a token checked once is not checked again; its claims come back whole', async () => {
    const token = await clientCredentialsToken(t, client);
    const first = await verify(token);
    assert.ok(first.claims);
    assert.equal(first.checked, true);
    const again = await verify(token);
    assert.equal(again.checked, false);
    assert.deepEqual(again.claims, first.claims);
    // Each caller gets its own copy.
    (again.claims as { sub: string }).sub = 'changed';
    assert.equal((await verify(token)).claims?.sub, first.claims.sub);
  });

  test('a tampered token is checked, and refused, even after the real one was remembered', async () => {
    const token = await clientCredentialsToken(t, client);
    assert.ok((await verify(token)).claims);
    const [h, p, s] = token.split('.');
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.deepEqual(await verify(flipped), { claims: null, checked: true });
    const claims = decodeJwt(token);
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${s}`;
    assert.deepEqual(await verify(forged), { claims: null, checked: true });
    // A refused token is never remembered: checked again every time.
    assert.equal((await verify(forged)).checked, true);
  });

  test('the audience is part of what was checked', async () => {
    const token = await clientCredentialsToken(t, client);
    const aud = decodeJwt(token).aud as string;
    assert.ok((await verify(token, aud)).claims);
    assert.equal((await verify(token, aud)).checked, false);
    assert.equal((await verify(token, 'another-audience')).claims, null);
  });

  test('an expired token is refused though it was remembered', async () => {
    const token = await clientCredentialsToken(t, client);
    assert.ok((await verify(token)).claims);
    const exp = Number(decodeJwt(token).exp);
    clock.set(exp * 1000 - 1);
    assert.ok((await verify(token)).claims);
    clock.set(exp * 1000);
    assert.equal((await verify(token)).claims, null);
    clock.set(Date.now());
  });

  test('a remembered token is checked again after 60 s, and when its key leaves the key set', async () => {
    const token = await clientCredentialsToken(t, client);
    assert.ok((await verify(token)).claims);
    clock.advance(59);
    assert.equal((await verify(token)).checked, false);
    clock.advance(2);
    assert.equal((await verify(token)).checked, true);
    // The key that signed it is gone (a new key set with only a new key): refused at once.
    await t.ctx.db.deleteFrom('signing_keys').execute();
    await t.ctx.keys.ensureKey();
    assert.deepEqual(await verify(token), { claims: null, checked: true });
  });
});
