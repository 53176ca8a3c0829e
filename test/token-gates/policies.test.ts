import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { FakeSolanaRpc, randomAddress } from './fake-rpc.js';

describe('gate policies', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let outsider: TestUser;
  let noView: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;
  const gates: Record<string, string> = {};
  const mints: Record<string, string> = {};
  let otherGate: string;
  const base = (o: TestOrg = org) => `/identity/organizations/${o.slug}/gate-policies`;

  function req(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    user: TestUser | null = owner,
    payload?: unknown,
  ) {
    return t.app.inject({
      method,
      url,
      headers: user ? user.auth : {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  }

  async function gate(o: TestOrg, user: TestUser, mint: string, min: string): Promise<string> {
    const res = await req('POST', `/identity/organizations/${o.slug}/token-gates`, user, {
      name: 'g',
      mintAddress: mint,
      minHoldings: min,
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id;
  }

  async function policy(rule: unknown, name = 'P'): Promise<Record<string, any>> {
    const res = await req('POST', base(), owner, { name, rule });
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  function assertRuleRefused(res: { statusCode: number; body: string }) {
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    assert.equal(body.error.code, 'validation_failed');
    assert.ok(
      body.error.details.fields.some(
        (f: { field: string }) => f.field === 'rule' || f.field.startsWith('rule.'),
      ),
      res.body,
    );
  }

  async function check(policyId: string, wallet: string, o: TestOrg = org) {
    return t.app.inject(`${base(o)}/${policyId}/check?walletAddress=${wallet}`);
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    // Many policies are written here: the write budget is not what this file tests.
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url, RATE_LIMIT_MULTIPLIER: '10' } });
    owner = await createUser(t);
    outsider = await createUser(t);
    noView = await createUser(t);
    org = await seedOrg(t, owner);
    otherOrg = await seedOrg(t, outsider);
    const roleId = newId('role_');
    await t.ctx.db
      .insertInto('roles')
      .values({
        id: roleId,
        org_id: org.id,
        name: 'Readers of nothing',
        description: null,
        built_in: null,
        permissions: ['org.read'],
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();
    await addMember(t, org, noView, roleId);
    for (const k of ['a', 'b', 'c']) {
      mints[k] = rpc.addMint();
      gates[k] = await gate(org, owner, mints[k] as string, '10');
    }
    otherGate = await gate(otherOrg, outsider, rpc.addMint(), '1');
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });

  it('creates, reads, lists, updates and deletes a policy, with events and audit entries', async () => {
    const rule = { all: [{ gate: gates.a }, { not: { gate: gates.b } }] };
    const created = await policy(rule, 'Members');
    assert.match(created.id, /^gpol_[A-Za-z0-9]+$/);
    assert.deepEqual(created, {
      id: created.id,
      org: org.slug,
      name: 'Members',
      rule,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    assert.deepEqual(json(await req('GET', `${base()}/${created.id}`)), created);
    const list = json(await req('GET', base()));
    assert.ok(list.items.some((p: { id: string }) => p.id === created.id));
    const newRule = { any: [{ gate: gates.c }] };
    const patched = await req('PATCH', `${base()}/${created.id}`, owner, { rule: newRule, description: 'd' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(json(patched).rule, newRule);
    assert.equal(json(patched).description, 'd');
    // b is no longer used: it can be deleted; c is.
    const delC = await req('DELETE', `/identity/organizations/${org.slug}/token-gates/${gates.c}`);
    assert.equal(delC.statusCode, 409, delC.body);
    assert.equal(json(delC).error.code, 'conflict');
    assert.equal((await req('DELETE', `${base()}/${created.id}`)).statusCode, 204);
    assert.equal((await req('GET', `${base()}/${created.id}`)).statusCode, 404);
    const events = await t.ctx.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('org_id', '=', org.id)
      .orderBy('created_at')
      .execute();
    const mine = events
      .filter((e) => (e.data as { policyId?: string }).policyId === created.id)
      .map((e) => e.type);
    assert.deepEqual(mine, ['gatePolicy.created', 'gatePolicy.updated', 'gatePolicy.deleted']);
    const audit = await t.ctx.db
      .selectFrom('audit_log')
      .select('action')
      .where('resource_id', '=', created.id)
      .orderBy('timestamp')
      .execute();
    assert.deepEqual(
      audit.map((a) => a.action),
      ['gatePolicy.created', 'gatePolicy.updated', 'gatePolicy.deleted'],
    );
  });

  it('a gate used by a policy cannot be deleted (409) until the policy goes', async () => {
    const g = await gate(org, owner, rpc.addMint(), '1');
    const p = await policy({ gate: g });
    const url = `/identity/organizations/${org.slug}/token-gates/${g}`;
    assert.equal((await req('DELETE', url)).statusCode, 409);
    assert.equal((await req('DELETE', `${base()}/${p.id}`)).statusCode, 204);
    assert.equal((await req('DELETE', url)).statusCode, 204);
  });

  it('refuses bad rules with 400 validation_failed naming rule', async () => {
    const leaf = { gate: gates.a };
    const deep = (n: number): unknown => (n === 1 ? leaf : { not: deep(n - 1) });
    await policy(deep(5)); // five levels are fine
    const tooMany = { any: Array.from({ length: 51 }, (_, i) => ({ gate: `gate_x${i}` })) };
    for (const rule of [
      deep(6),
      { all: [] },
      { any: [] },
      { atLeast: 0, of: [leaf] },
      { atLeast: 2, of: [leaf] },
      { atLeast: 1 },
      { all: [leaf], any: [leaf] },
      { gate: gates.a, not: leaf },
      {},
      tooMany,
      { gate: 'gate_doesnotexist' },
      { all: [leaf, { gate: otherGate }] },
    ]) {
      assertRuleRefused(await req('POST', base(), owner, { name: 'bad', rule }));
    }
    const p = await policy(leaf);
    assertRuleRefused(await req('PATCH', `${base()}/${p.id}`, owner, { rule: { gate: otherGate } }));
    assert.equal((await req('POST', base(), owner, { name: 'x' })).statusCode, 400);
  });

  it('needs org.tokenGates.view / edit, and answers 404 for another org or policy', async () => {
    const p = await policy({ gate: gates.a });
    assert.equal((await req('GET', base(), noView)).statusCode, 403);
    assert.equal((await req('POST', base(), noView, { name: 'x', rule: { gate: gates.a } })).statusCode, 403);
    assert.equal((await req('GET', base(), null)).statusCode, 401);
    assert.equal((await req('GET', `${base()}/${p.id}`, outsider)).statusCode, 404);
    assert.equal((await req('GET', `${base(otherOrg)}/${p.id}`, outsider)).statusCode, 404);
    assert.equal((await req('PATCH', `${base(otherOrg)}/${p.id}`, outsider, { name: 'y' })).statusCode, 404);
    assert.equal((await req('DELETE', `${base(otherOrg)}/${p.id}`, outsider)).statusCode, 404);
    assert.equal((await check(p.id, randomAddress(), otherOrg)).statusCode, 404);
    assert.equal((await check('gpol_nope', randomAddress())).statusCode, 404);
  });

  it('spends a gate check point per distinct gate of the rule, and a refresh point each with refresh', async () => {
    const w = rpc.addWallet();
    // Gate a appears twice: three distinct gates.
    const p = await policy({
      any: [{ gate: gates.a }, { all: [{ gate: gates.b }, { gate: gates.a }] }, { gate: gates.c }],
    });
    const at = (query: string) =>
      t.app.inject({
        url: `${base()}/${p.id}/check?walletAddress=${w}${query}`,
        remoteAddress: '203.0.113.61',
      });
    const plain = await at('');
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.headers['ratelimit-remaining'], String(6000 - 3));
    const forced = await at('&refresh=true');
    assert.equal(forced.statusCode, 200, forced.body);
    assert.equal(forced.headers['ratelimit-limit'], '600');
    assert.equal(forced.headers['ratelimit-remaining'], String(600 - 3));
    // An unknown policy spends the one point of its lookup.
    const unknown = await t.app.inject({
      url: `${base()}/gpol_unknown/check?walletAddress=${w}`,
      remoteAddress: '203.0.113.61',
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers['ratelimit-remaining'], String(6000 - 4));
  });

  it('checks a wallet against every operator, evaluating every gate', async () => {
    const w = rpc.addWallet();
    rpc.setBalance(w, mints.a as string, '10'); // passes a
    rpc.setBalance(w, mints.b as string, '5'); // fails b (insufficient)
    // c: no holding → 0, fails
    const cases: Array<[unknown, boolean]> = [
      [{ gate: gates.a }, true],
      [{ all: [{ gate: gates.a }, { gate: gates.b }] }, false],
      [{ any: [{ gate: gates.b }, { gate: gates.a }] }, true],
      [{ atLeast: 2, of: [{ gate: gates.a }, { gate: gates.b }, { gate: gates.c }] }, false],
      [{ atLeast: 1, of: [{ gate: gates.a }, { gate: gates.b }, { gate: gates.c }] }, true],
      [{ not: { gate: gates.b } }, true],
      [{ all: [{ gate: gates.a }, { not: { any: [{ gate: gates.b }, { gate: gates.c }] } }] }, true],
    ];
    for (const [rule, expected] of cases) {
      const p = await policy(rule);
      const res = await check(p.id, w);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      const body = json(res);
      assert.equal(body.hasAccess, expected, JSON.stringify(rule));
      const ids = [...new Set(JSON.stringify(rule).match(/gate_[A-Za-z0-9]+/g))];
      assert.deepEqual(
        body.gates.map((g: { gateId: string }) => g.gateId),
        ids,
      );
    }
    const p = await policy({ any: [{ gate: gates.a }, { gate: gates.b }] });
    assert.deepEqual(json(await check(p.id, w)).gates, [
      { gateId: gates.a, hasAccess: true, balance: '10', reason: null },
      { gateId: gates.b, hasAccess: false, balance: '5', reason: 'insufficientBalance' },
    ]);
    const bad = await check(p.id, 'not-a-wallet');
    assert.equal(bad.statusCode, 422);
    assert.equal(json(bad).error.code, 'validation_failed');
  });
});
