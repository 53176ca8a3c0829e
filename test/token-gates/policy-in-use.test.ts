import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { createBrand, type TestBrand } from '../helpers/oidc.js';
import { FakeSolanaRpc } from './fake-rpc.js';

/**
 * DESIGN §3: a gate policy named by a scope or by an app cannot be deleted (409 `conflict`), each
 * on its own, and can once nothing names it.
 */
describe('a gate policy in use', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let org: TestOrg;
  let brand: TestBrand;
  let gateId: string;
  const orgUrl = () => `/identity/organizations/${org.slug}`;

  async function call(method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
    return t.app.inject({ method, url, headers: owner.auth, ...(payload ? { payload } : {}) });
  }
  async function newPolicy(): Promise<string> {
    const res = await call('POST', `${orgUrl()}/gate-policies`, { name: 'P', rule: { gate: gateId } });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id;
  }
  async function assertInUse(policyId: string, message: RegExp) {
    const res = await call('DELETE', `${orgUrl()}/gate-policies/${policyId}`);
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(json(res).error.code, 'conflict');
    assert.match(json(res).error.message, message);
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url, RATE_LIMIT_MULTIPLIER: '10' } });
    owner = await createUser(t);
    org = await seedOrg(t, owner);
    brand = await createBrand(t, { orgId: org.id });
    const gate = await call('POST', `${orgUrl()}/token-gates`, {
      name: 'g',
      mintAddress: rpc.addMint('spl-token'),
      minHoldings: '1',
    });
    gateId = json(gate).id;
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });

  it('named by a scope only: 409 until the scope lets go of it', async () => {
    const policyId = await newPolicy();
    const scopes = `${orgUrl()}/brands/${brand.slug}/scopes`;
    const scope = await call('POST', scopes, { name: 'club:read', description: 'x', gatePolicyId: policyId });
    assert.equal(scope.statusCode, 201, scope.body);
    await assertInUse(policyId, /scope/);
    const freed = await call('PATCH', `${scopes}/club:read`, { gatePolicyId: null });
    assert.equal(freed.statusCode, 200, freed.body);
    assert.equal((await call('DELETE', `${orgUrl()}/gate-policies/${policyId}`)).statusCode, 204);
  });

  it('required by an app only: 409 until the app drops the requirement', async () => {
    const policyId = await newPolicy();
    const apps = `${orgUrl()}/brands/${brand.slug}/apps`;
    const app = await call('POST', apps, {
      name: 'Members',
      type: 'web',
      redirectUris: ['https://members.example/cb'],
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid'],
      requiredGatePolicyId: policyId,
    });
    assert.equal(app.statusCode, 201, app.body);
    await assertInUse(policyId, /app/);
    const freed = await call('PATCH', `${apps}/${json(app).clientId}`, { requiredGatePolicyId: null });
    assert.equal(freed.statusCode, 200, freed.body);
    assert.equal((await call('DELETE', `${orgUrl()}/gate-policies/${policyId}`)).statusCode, 204);
  });
});
