import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { createVerifier } from '../../examples/resource-server/verify.mjs';
import { type RunningServer, startServer } from '../helpers/server.js';
import { runExample } from './run.js';

/** examples/resource-server against a real Gatehouse: its own tokens, and the ones it must refuse. */
describe('example: resource server (jose) against Gatehouse', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer();
  });
  after(() => srv.stop());

  it('accepts the brand’s client-credentials token and refuses none, another audience and a tampered one', async () => {
    const { code, stdout, stderr } = await runExample('examples/resource-server/run.mjs', {
      ...srv.env,
      GATEHOUSE_URL: srv.url,
    });
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    const app = /m2m app (\w+)/.exec(stdout)?.[1];
    assert.ok(app, stdout);
    const ok = /^the app token: 200 (.*)$/m.exec(stdout);
    assert.ok(ok, stdout);
    assert.deepEqual(JSON.parse(ok[1]).client, app);
    assert.match(stdout, /^no token: 401 \{"error":"unauthorized"\}$/m);
    assert.match(stdout, /^a console token \(aud console\): 401 .*ERR_JWT_CLAIM_VALIDATION_FAILED/m);
    assert.match(stdout, /^a tampered token: 401 .*ERR_JWS_SIGNATURE_VERIFICATION_FAILED/m);
  });
});

/** The verifier's rules, with tokens signed by a key set of our own. */
describe('example: resource server verifier', () => {
  const issuer = 'https://issuer.example';
  let jwks: Server;
  let jwksUri: string;
  let sign: (claims: JWTPayload, opts?: { typ?: string; exp?: number }) => Promise<string>;
  const now = Math.floor(Date.now() / 1000);

  before(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
    sign = (claims, opts = {}) =>
      new SignJWT({ iss: issuer, aud: 'acme-shop', sub: 'usr_1', scope: 'orders:read', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: opts.typ ?? 'at+jwt' })
        .setIssuedAt(now)
        .setExpirationTime(opts.exp ?? now + 3600)
        .sign(privateKey);
  });
  after(() => new Promise<void>((r) => jwks.close(() => r())));

  const verifier = (extra: { org?: string; clientIds?: string[]; now?: () => Date } = {}) =>
    createVerifier({ issuer, audience: 'acme-shop', jwksUri, ...extra });
  const refusal = async (verify: (t: string) => Promise<unknown>, token: string) => {
    try {
      await verify(token);
    } catch (e) {
      return (e as { code: string }).code;
    }
    return 'accepted';
  };

  it('accepts a valid access token and returns its claims', async () => {
    const claims = (await (await verifier())(await sign({}))) as JWTPayload;
    assert.equal(claims.sub, 'usr_1');
  });

  it('refuses a wrong issuer, a wrong audience, an expired token and an ID token', async () => {
    const verify = await verifier();
    assert.equal(
      await refusal(verify, await sign({ iss: 'https://evil.example' })),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    );
    assert.equal(await refusal(verify, await sign({ aud: 'console' })), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    assert.equal(await refusal(verify, await sign({}, { exp: now - 10 })), 'ERR_JWT_EXPIRED');
    assert.equal(await refusal(verify, await sign({}, { typ: 'JWT' })), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    // A token valid now is refused an hour later (the injected clock).
    const later = await verifier({ now: () => new Date((now + 3601) * 1000) });
    assert.equal(await refusal(later, await sign({})), 'ERR_JWT_EXPIRED');
  });

  it('checks org and client_id when the token carries them, and tolerates their absence', async () => {
    const verify = await verifier({ org: 'acme', clientIds: ['cl_good'] });
    assert.equal(await refusal(verify, await sign({})), 'accepted');
    assert.equal(await refusal(verify, await sign({ org: 'acme', client_id: 'cl_good' })), 'accepted');
    assert.equal(await refusal(verify, await sign({ org: 'other' })), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    assert.equal(
      await refusal(verify, await sign({ client_id: 'cl_evil' })),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    );
  });
});
