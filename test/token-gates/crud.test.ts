import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { newId } from '../../src/lib/ids.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { addMember, seedOrg, type TestOrg } from '../helpers/fixtures.js';
import { randomAddress } from './fake-rpc.js';

describe('token gate management', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let noView: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;
  const mint = randomAddress();
  const base = () => `/identity/organizations/${org.slug}/token-gates`;

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

  async function create(body: Record<string, unknown> = {}): Promise<any> {
    const res = await req('POST', base(), owner, {
      name: 'Holders',
      mintAddress: mint,
      minHoldings: '1',
      ...body,
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  async function eventsOf(gateId: string) {
    const rows = await t.ctx.db
      .selectFrom('events')
      .select(['type', 'data', 'actor_user_id', 'org_id'])
      .where('org_id', '=', org.id)
      .orderBy('created_at')
      .execute();
    return rows.filter((r) => (r.data as { gateId?: string }).gateId === gateId);
  }

  async function auditOf(gateId: string) {
    return t.ctx.db
      .selectFrom('audit_log')
      .select(['action', 'actor_user_id', 'resource_type', 'metadata'])
      .where('resource_id', '=', gateId)
      .orderBy('timestamp')
      .execute();
  }

  function assertValidation(res: { statusCode: number; body: string }, field: string, code?: string) {
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    assert.equal(body.error.code, 'validation_failed');
    const hit = body.error.details.fields.find((f: { field: string }) => f.field === field);
    assert.ok(hit, `expected a field error on ${field}: ${res.body}`);
    if (code) assert.equal(hit.code, code);
  }

  before(async () => {
    t = await buildTestApp();
    owner = await createUser(t);
    member = await createUser(t);
    outsider = await createUser(t);
    noView = await createUser(t);
    org = await seedOrg(t, owner);
    otherOrg = await seedOrg(t, outsider);
    await addMember(t, org, member, 'member');
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
  });
  after(() => t.close());

  it('creates a gate: 201 with the whole gate, defaults, and canonical minHoldings', async () => {
    const res = await req('POST', base(), owner, {
      name: 'Whales',
      description: 'big holders',
      mintAddress: mint,
      minHoldings: '000123',
    });
    assert.equal(res.statusCode, 201);
    const gate = json(res);
    assert.match(gate.id, /^gate_[A-Za-z0-9]{20}$/);
    assert.deepEqual(gate, {
      id: gate.id,
      org: org.slug,
      name: 'Whales',
      description: 'big holders',
      kind: 'token',
      mintAddress: mint,
      minHoldings: '123',
      enabled: true,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    const zero = await create({ minHoldings: '0000', enabled: false });
    assert.equal(zero.minHoldings, '0');
    assert.equal(zero.enabled, false);
    assert.equal('description' in zero, false);
  });

  it('keeps minHoldings of any size exactly', async () => {
    const huge = `9${'0'.repeat(99)}1`;
    const gate = await create({ minHoldings: huge });
    assert.equal(gate.minHoldings, huge);
    assert.equal(json(await req('GET', `${base()}/${gate.id}`)).minHoldings, huge);
  });

  it('records tokenGate.created with an audit entry', async () => {
    const gate = await create({ name: 'Evented', minHoldings: '42' });
    const events = await eventsOf(gate.id);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'tokenGate.created');
    assert.equal(events[0].actor_user_id, owner.id);
    assert.deepEqual(events[0].data, {
      gateId: gate.id,
      name: 'Evented',
      kind: 'token',
      mintAddress: mint,
      minHoldings: '42',
      enabled: true,
    });
    const audit = await auditOf(gate.id);
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor_user_id, a.resource_type]),
      [['tokenGate.created', owner.id, 'tokenGate']],
    );
  });

  it('refuses each invalid create field with 400 validation_failed naming it', async () => {
    const good = { name: 'G', mintAddress: mint, minHoldings: '1' };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...good, name: undefined }, 'name', 'required'],
      [{ ...good, name: '' }, 'name', 'too_short'],
      [{ ...good, name: 'x'.repeat(81) }, 'name', 'too_long'],
      [{ ...good, description: 'x'.repeat(501) }, 'description', 'too_long'],
      [{ ...good, mintAddress: undefined }, 'mintAddress', 'required'],
      [{ ...good, mintAddress: '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl' }, 'mintAddress', 'invalid_format'],
      [{ ...good, mintAddress: bs58.encode(Buffer.alloc(31, 5)) }, 'mintAddress', 'invalid_format'],
      [{ ...good, minHoldings: undefined }, 'minHoldings', 'required'],
      [{ ...good, minHoldings: 5 }, 'minHoldings', 'invalid_type'],
      [{ ...good, minHoldings: '+5' }, 'minHoldings', 'invalid_format'],
      [{ ...good, minHoldings: '-5' }, 'minHoldings', 'invalid_format'],
      [{ ...good, minHoldings: '1e3' }, 'minHoldings', 'invalid_format'],
      [{ ...good, minHoldings: '1.5' }, 'minHoldings', 'invalid_format'],
      [{ ...good, minHoldings: ' 5' }, 'minHoldings', 'invalid_format'],
      [{ ...good, minHoldings: '' }, 'minHoldings', 'too_short'],
      [{ ...good, minHoldings: '1'.repeat(1001) }, 'minHoldings', 'too_long'],
      [{ ...good, enabled: 'yes' }, 'enabled', 'invalid_type'],
      [{ ...good, id: 'gate_mine' }, 'id', 'unknown_field'],
    ];
    for (const [payload, field, code] of cases) {
      assertValidation(await req('POST', base(), owner, payload), field, code);
    }
    const n = await t.ctx.db
      .selectFrom('token_gates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('name', '=', 'G')
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 0);
  });

  it('lists the org’s gates as { items, total } and pages them', async () => {
    const list = json(await req('GET', base()));
    assert.ok(list.total >= 3);
    assert.equal(list.items.length, Math.min(list.total, 50));
    assert.ok(list.items.every((g: { org: string }) => g.org === org.slug));
    const page = json(await req('GET', `${base()}?limit=1&offset=1`));
    assert.equal(page.items.length, 1);
    assert.equal(page.total, list.total);
    assert.equal(page.items[0].id, list.items[1].id);
    assertValidation(await req('GET', `${base()}?limit=0`), 'limit');
    assertValidation(await req('GET', `${base()}?limit=101`), 'limit');
    assertValidation(await req('GET', `${base()}?offset=-1`), 'offset');
  });

  it('lets a member (view) read gates', async () => {
    const gate = await create();
    assert.equal((await req('GET', base(), member)).statusCode, 200);
    const got = await req('GET', `${base()}/${gate.id}`, member);
    assert.equal(got.statusCode, 200);
    assert.deepEqual(json(got), gate);
  });

  it('patches name, description, minHoldings and enabled; answers the whole gate; records only changed fields', async () => {
    const gate = await create({ name: 'Before', description: 'desc', minHoldings: '10' });
    t.clock.advance(60);
    const res = await req('PATCH', `${base()}/${gate.id}`, owner, {
      name: 'After',
      description: null,
      minHoldings: '0020',
      enabled: true,
    });
    assert.equal(res.statusCode, 200);
    const patched = json(res);
    const { description: _cleared, ...rest } = gate;
    assert.deepEqual(patched, {
      ...rest,
      name: 'After',
      minHoldings: '20',
      updatedAt: t.clock.now().toISOString(),
    });
    assert.equal('description' in patched, false);
    const events = await eventsOf(gate.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['tokenGate.created', 'tokenGate.updated'],
    );
    assert.deepEqual(events[1].data, {
      gateId: gate.id,
      before: { name: 'Before', description: 'desc', minHoldings: '10' },
      after: { name: 'After', description: null, minHoldings: '20' },
    });
    assert.deepEqual(
      (await auditOf(gate.id)).map((a) => a.action),
      ['tokenGate.created', 'tokenGate.updated'],
    );
  });

  it('records nothing for a PATCH that changes nothing', async () => {
    const gate = await create({ minHoldings: '5' });
    const res = await req('PATCH', `${base()}/${gate.id}`, owner, { minHoldings: '005', enabled: true });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), gate);
    assert.deepEqual(
      (await eventsOf(gate.id)).map((e) => e.type),
      ['tokenGate.created'],
    );
  });

  it('refuses mintAddress (immutable), an empty PATCH and invalid fields with 400', async () => {
    const gate = await create();
    const url = `${base()}/${gate.id}`;
    assertValidation(
      await req('PATCH', url, owner, { mintAddress: randomAddress() }),
      'mintAddress',
      'unknown_field',
    );
    assertValidation(await req('PATCH', url, owner, {}), 'body');
    assertValidation(await req('PATCH', url, owner, { name: '' }), 'name', 'too_short');
    assertValidation(await req('PATCH', url, owner, { name: null }), 'name');
    assertValidation(await req('PATCH', url, owner, { description: 'x'.repeat(501) }), 'description');
    assertValidation(await req('PATCH', url, owner, { minHoldings: '1e9' }), 'minHoldings', 'invalid_format');
    assertValidation(await req('PATCH', url, owner, { enabled: null }), 'enabled');
    assert.deepEqual(json(await req('GET', url)), gate);
  });

  it('deletes a gate: 204, then 404, with tokenGate.deleted', async () => {
    const gate = await create();
    const res = await req('DELETE', `${base()}/${gate.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal((await req('GET', `${base()}/${gate.id}`)).statusCode, 404);
    assert.equal((await req('DELETE', `${base()}/${gate.id}`)).statusCode, 404);
    const events = await eventsOf(gate.id);
    assert.deepEqual(events.at(-1)?.data, { gateId: gate.id });
    assert.equal(events.at(-1)?.type, 'tokenGate.deleted');
    assert.deepEqual(
      (await auditOf(gate.id)).map((a) => a.action),
      ['tokenGate.created', 'tokenGate.deleted'],
    );
  });

  it('answers 403 with details.missing to a caller without the permission', async () => {
    const gate = await create();
    const url = `${base()}/${gate.id}`;
    for (const [method, u, payload] of [
      ['POST', base(), { name: 'x', mintAddress: mint, minHoldings: '1' }],
      ['PATCH', url, { name: 'x' }],
      ['DELETE', url, undefined],
    ] as const) {
      const res = await req(method, u, member, payload);
      assert.equal(res.statusCode, 403, `${method} ${res.body}`);
      assert.equal(json(res).error.code, 'forbidden');
      assert.deepEqual(json(res).error.details.missing, ['org.tokenGates.edit']);
    }
    for (const u of [base(), url]) {
      const res = await req('GET', u, noView);
      assert.equal(res.statusCode, 403);
      assert.deepEqual(json(res).error.details.missing, ['org.tokenGates.view']);
    }
    assert.deepEqual(json(await req('GET', url)), gate, 'unchanged');
  });

  it('hides another org’s gates (404) and refuses anonymous callers (401)', async () => {
    const gate = await create();
    const foreign = `/identity/organizations/${otherOrg.slug}/token-gates`;
    // The other org's owner cannot reach this org's gate through their own org…
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await req(
        method,
        `${foreign}/${gate.id}`,
        outsider,
        method === 'PATCH' ? { name: 'x' } : undefined,
      );
      assert.equal(res.statusCode, 404, method);
      assert.equal(json(res).error.code, 'not_found');
    }
    assert.ok(!json(await req('GET', foreign, outsider)).items.some((g: { id: string }) => g.id === gate.id));
    // …nor through this org, where they are not a member.
    assert.equal((await req('GET', `${base()}/${gate.id}`, outsider)).statusCode, 404);
    assert.equal((await req('GET', base(), null)).statusCode, 401);
    assert.equal(json(await req('GET', `${base()}/${gate.id}`)).name, gate.name);
  });
});
