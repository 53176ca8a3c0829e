import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { networkSourceKey } from '../../src/http/network-source.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from './fake-rpc.js';

/** Attestations (DESIGN §3): `attest=true` on the single, policy and bulk checks. */
describe('token gate attestations', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  let gate: string;
  let gate2: string;
  let policyId: string;
  let holder: string;
  let mint: string;

  const checkUrl = (g: string, wallet: string, query = '&attest=true') =>
    `/identity/organizations/${org.slug}/token-gates/${g}/check?walletAddress=${wallet}${query}`;

  /** Verifies as a third party would: the served JWKS, our issuer, the attestation's typ, the test clock. */
  async function verify(jws: string, at: Date = t.clock.now()): Promise<JWTPayload> {
    const jwks = createLocalJWKSet(json(await t.app.inject('/.well-known/jwks.json')));
    const { payload } = await jwtVerify(jws, jwks, {
      algorithms: ['RS256'],
      issuer: t.ctx.config.issuer,
      typ: 'gate-attestation+jwt',
      currentDate: at,
    });
    return payload;
  }

  async function post(url: string, payload: unknown) {
    const res = await t.app.inject({ method: 'POST', url, headers: owner.auth, payload: payload as object });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id as string;
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    mint = rpc.addMint('spl-token');
    const mint2 = rpc.addMint('spl-token');
    holder = rpc.addWallet();
    rpc.addTokenAccount(holder, mint, '150');
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    const gates = `/identity/organizations/${org.slug}/token-gates`;
    gate = await post(gates, { name: 'g', mintAddress: mint, minHoldings: '100' });
    gate2 = await post(gates, { name: 'g2', mintAddress: mint2, minHoldings: '1' });
    policyId = await post(`/identity/organizations/${org.slug}/gate-policies`, {
      name: 'P',
      rule: { any: [{ gate }, { gate: gate2 }] },
    });
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });

  it('signs the single check’s answer, fresh and cached, with a key of the JWKS', async () => {
    const fresh = await t.app.inject(checkUrl(gate, holder));
    assert.equal(fresh.statusCode, 200, fresh.body);
    const body = json(fresh);
    assert.deepEqual(
      { hasAccess: body.hasAccess, balance: body.balance, reason: body.reason },
      { hasAccess: true, balance: '150', reason: null },
    );
    const header = decodeProtectedHeader(body.attestation);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.typ, 'gate-attestation+jwt');
    const jwks = json(await t.app.inject('/.well-known/jwks.json'));
    assert.ok(jwks.keys.some((k: { kid: string }) => k.kid === header.kid));
    const claims = await verify(body.attestation);
    const iat = t.clock.nowSec();
    assert.deepEqual(claims, {
      iss: t.ctx.config.issuer,
      sub: holder,
      gate,
      org: org.slug,
      has_access: true,
      balance: '150',
      reason: null,
      iat,
      exp: iat + 300,
    });

    t.clock.advance(10);
    const cached = await t.app.inject(checkUrl(gate, holder));
    assert.equal(cached.headers.age, '10');
    const again = await verify(json(cached).attestation);
    assert.equal(again.iat, iat + 10);
    assert.equal(again.has_access, true);
    assert.equal(again.balance, '150');
  });

  it('signs a refusal too (insufficient balance, unknown wallet)', async () => {
    const poor = rpc.addWallet();
    rpc.addTokenAccount(poor, mint, '99');
    const claims = await verify(json(await t.app.inject(checkUrl(gate, poor))).attestation);
    assert.equal(claims.has_access, false);
    assert.equal(claims.balance, '99');
    assert.equal(claims.reason, 'insufficientBalance');
    const ghost = randomAddress();
    const ghostClaims = await verify(json(await t.app.inject(checkUrl(gate, ghost))).attestation);
    assert.equal(ghostClaims.reason, 'walletNotFound');
    assert.equal(ghostClaims.balance, null);
  });

  it('expires 5 minutes after it was signed (the injectable clock)', async () => {
    const jws = json(await t.app.inject(checkUrl(gate, holder))).attestation;
    const signedAt = t.clock.nowMs();
    await verify(jws, new Date(signedAt + 299_000));
    await assert.rejects(verify(jws, new Date(signedAt + 300_000)), { code: 'ERR_JWT_EXPIRED' });
    await assert.rejects(verify(jws, new Date(signedAt + 301_000)), { code: 'ERR_JWT_EXPIRED' });
  });

  it('is rejected when tampered with', async () => {
    const poor = rpc.addWallet();
    const jws: string = json(await t.app.inject(checkUrl(gate, poor))).attestation;
    const [h, p, s] = jws.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, has_access: true })).toString('base64url');
    await assert.rejects(verify(`${h}.${forged}.${s}`), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    const flipped = `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    await assert.rejects(verify(`${h}.${p}.${flipped}`), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    // Another typ in the header (say, to pass it off as an access token) breaks the signature too.
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const asJwt = Buffer.from(JSON.stringify({ ...header, typ: 'at+jwt' })).toString('base64url');
    await assert.rejects(verify(`${asJwt}.${p}.${s}`));
  });

  it('is absent without attest=true, and attest takes only the value true', async () => {
    const plain = json(await t.app.inject(checkUrl(gate, holder, '')));
    assert.deepEqual(Object.keys(plain).sort(), ['balance', 'hasAccess', 'reason']);
    const bad = await t.app.inject(checkUrl(gate, holder, '&attest=1'));
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(json(bad).error.code, 'validation_failed');
    const policyBad = await t.app.inject(
      `/identity/organizations/${org.slug}/gate-policies/${policyId}/check?walletAddress=${holder}&attest=yes`,
    );
    assert.equal(policyBad.statusCode, 422, policyBad.body);
    const bulkBad = await t.app.inject({
      method: 'POST',
      url: `/identity/organizations/${org.slug}/token-gates/check?attest=false`,
      payload: { walletAddresses: [holder], gateIds: [gate] },
    });
    assert.equal(bulkBad.statusCode, 400, bulkBad.body);
    assert.equal(json(bulkBad).error.code, 'validation_failed');
  });

  it('signs the policy check’s answer with `policy` and no per-gate claims', async () => {
    const url = `/identity/organizations/${org.slug}/gate-policies/${policyId}/check?walletAddress=${holder}`;
    const plain = json(await t.app.inject(url));
    assert.equal(plain.attestation, undefined);
    const res = await t.app.inject(`${url}&attest=true`);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.hasAccess, true);
    assert.equal(body.gates.length, 2);
    const iat = t.clock.nowSec();
    assert.deepEqual(await verify(body.attestation), {
      iss: t.ctx.config.issuer,
      sub: holder,
      policy: policyId,
      org: org.slug,
      has_access: true,
      iat,
      exp: iat + 300,
    });
  });

  it('gives the bulk check one attestation per result, in order, duplicates kept', async () => {
    const other = rpc.addWallet();
    const wallets = [holder, other, holder];
    const gateIds = [gate, gate2];
    const url = `/identity/organizations/${org.slug}/token-gates/check`;
    const plain = await t.app.inject({ method: 'POST', url, payload: { walletAddresses: wallets, gateIds } });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.ok(json(plain).results.every((r: object) => !('attestation' in r)));
    const res = await t.app.inject({
      method: 'POST',
      url: `${url}?attest=true`,
      payload: { walletAddresses: wallets, gateIds },
    });
    assert.equal(res.statusCode, 200, res.body);
    const results = json(res).results as Array<Record<string, any>>;
    assert.equal(results.length, 6);
    for (const r of results) {
      const claims = await verify(r.attestation);
      assert.deepEqual(
        [claims.sub, claims.gate, claims.org, claims.has_access, claims.balance, claims.reason],
        [r.walletAddress, r.gateId, org.slug, r.hasAccess, r.balance, r.reason],
      );
      assert.equal(claims.policy, undefined);
    }
    assert.deepEqual(
      results.map((r) => [r.walletAddress, r.gateId, r.hasAccess]),
      [
        [holder, gate, true],
        [holder, gate2, false],
        [other, gate, false],
        [other, gate2, false],
        [holder, gate, true],
        [holder, gate2, false],
      ],
    );
  });

  it('spends one point of the per-IP signature budget (2,000 a minute) per distinct pair signed', async () => {
    const source = networkSourceKey('127.0.0.1', 64);
    await t.ctx.rateLimits.reset('gateAttest', source);
    await t.ctx.rateLimits.reset('gateBulkCheck', source);
    const wallets = Array.from({ length: 90 }, () => randomAddress());
    const url = `/identity/organizations/${org.slug}/token-gates/check?attest=true`;
    // Duplicated wallets are signed once: 90 distinct wallets × 2 gates = 180 signatures a request,
    // 11 requests 1,980 of the 2,000; the 12th would pass 2,000.
    const body = { walletAddresses: [...wallets, ...wallets.slice(0, 10)], gateIds: [gate, gate2] };
    for (let i = 0; i < 11; i++) {
      const res = await t.app.inject({ method: 'POST', url, payload: body });
      assert.equal(res.statusCode, 200, res.body);
    }
    const refused = await t.app.inject({ method: 'POST', url, payload: body });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(json(refused).error.code, 'rate_limited');
    const unsigned = await t.app.inject({
      method: 'POST',
      url: url.replace('?attest=true', ''),
      payload: body,
    });
    assert.equal(unsigned.statusCode, 200, 'the check itself still has budget');
  });
});
