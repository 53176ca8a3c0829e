import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { resolveConnectionCredentials } from '../../src/modules/connections/connections.service.js';
import { buildTestApp, createUser, type TestApp } from '../helpers/app.js';
import { addMember } from '../helpers/fixtures.js';
import {
  auditAndEvents,
  auditOf,
  brandUrl,
  call,
  createBrand,
  eventsOf,
  expect400,
  expect403,
  expect404,
  memberWith,
  type World,
  world,
} from './setup.js';

const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;

const GOOGLE_SECRET = 'GOCSPX-google-secret-value-1234';
const CONFIGS: Record<string, Record<string, unknown>> = {
  google: {
    clientId: 'google-client.apps.example',
    clientSecret: GOOGLE_SECRET,
    scopes: ['openid', 'email'],
  },
  microsoft: { clientId: 'ms-client', clientSecret: 'ms-secret-value-5678', tenant: 'organizations' },
  discord: { clientId: 'discord-client', clientSecret: 'discord-secret-value-9012' },
  facebook: { clientId: 'fb-client', clientSecret: 'fb-secret-value-3456' },
  x: { clientId: 'x-client', clientSecret: 'x-secret-value-7890' },
  matrica: { clientId: 'matrica-client', clientSecret: 'matrica-secret-value-2345' },
  apple: { clientId: 'com.example.service', teamId: 'ABCDE12345', keyId: 'KEY1234567', privateKey: p256 },
  telegram: { botToken: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq', botUsername: 'example_login_bot' },
};
/** Every secret value above: none may ever come back out. */
const SECRETS = [
  GOOGLE_SECRET,
  'ms-secret-value-5678',
  'discord-secret-value-9012',
  'fb-secret-value-3456',
  'x-secret-value-7890',
  'matrica-secret-value-2345',
  'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq',
  p256.split('\n')[1],
];

describe('connections', () => {
  let t: TestApp;
  let w: World;
  const responses: string[] = [];

  before(async () => {
    t = await buildTestApp({
      env: {
        RATE_LIMIT_MULTIPLIER: '100',
        PROVIDER_GOOGLE_CLIENT_ID: 'operator-google-id',
        PROVIDER_GOOGLE_CLIENT_SECRET: 'operator-google-secret',
        PROVIDER_MICROSOFT_CLIENT_ID: 'operator-ms-id',
        PROVIDER_MICROSOFT_CLIENT_SECRET: 'operator-ms-secret',
        PROVIDER_MICROSOFT_TENANT: 'common',
        PROVIDER_APPLE_CLIENT_ID: 'only-half-configured',
      },
    });
    w = await world(t);
  });
  after(() => t.close());

  async function req(...args: Parameters<typeof call>) {
    const res = await call(...args);
    responses.push(res.raw);
    return res;
  }

  async function brandWith(...types: string[]) {
    const brand = await createBrand(t, w.owner, w.org);
    const url = `${brandUrl(w.org, brand.slug)}/connections`;
    for (const type of types) {
      const res = await req(t, w.owner, 'PUT', url, { type, config: CONFIGS[type] });
      assert.equal(res.status, 201, res.raw);
    }
    return { brand, url };
  }

  it('creates a connection of every type and answers metadata only, with the callback URL', async () => {
    const { brand, url } = await brandWith();
    for (const type of Object.keys(CONFIGS)) {
      const res = await req(t, w.owner, 'PUT', url, { type, config: CONFIGS[type] });
      assert.equal(res.status, 201, `${type}: ${res.raw}`);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'brand',
        'callbackUrl',
        'createdAt',
        'enabled',
        'id',
        'type',
        'updatedAt',
      ]);
      assert.equal(res.body.brand, brand.slug);
      assert.equal(res.body.type, type);
      assert.equal(res.body.enabled, true);
      assert.equal(
        res.body.callbackUrl,
        `http://gatehouse.test/oauth/${type}/${brand.oauthCallbackId}/callback`,
      );
    }
    const list = await req(t, w.owner, 'GET', url);
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 8);
    assert.deepEqual(
      list.body.items.map((c: any) => c.type),
      [...Object.keys(CONFIGS)].sort(),
    );
    const events = (await eventsOf(t, w.org.id, 'socialProvider.upserted')).filter(
      (e) => e.brand === brand.slug,
    );
    assert.equal(events.length, 8);
    assert.deepEqual(events[0], { brand: brand.slug, type: events[0].type, enabled: true });
  });

  it('replaces the config on a second PUT (200, same id) and honours enabled', async () => {
    const { brand, url } = await brandWith('google');
    const before = (await req(t, w.owner, 'GET', url)).body.items[0];
    t.clock.advance(10);
    const res = await req(t, w.owner, 'PUT', url, {
      type: 'google',
      enabled: false,
      config: { clientId: 'new-id', clientSecret: 'new-google-secret-0000' },
    });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.id, before.id);
    assert.equal(res.body.enabled, false);
    assert.equal(res.body.createdAt, before.createdAt);
    assert.equal(res.body.updatedAt, t.clock.now().toISOString());
    const last = (await eventsOf(t, w.org.id, 'socialProvider.upserted'))
      .filter((e) => e.brand === brand.slug)
      .pop();
    assert.deepEqual(last, { brand: brand.slug, type: 'google', enabled: false });
    await req(t, w.owner, 'PATCH', `${url}/google/enabled`, { enabled: true });
    const creds = await resolveConnectionCredentials(t.ctx, brand.id, 'google');
    assert.deepEqual(creds, {
      source: 'brand',
      config: { clientId: 'new-id', clientSecret: 'new-google-secret-0000' },
    });
    SECRETS.push('new-google-secret-0000');
  });

  it('encrypts the config at rest, bound to the brand and type', async () => {
    const { brand } = await brandWith('telegram');
    const row = await t.ctx.db
      .selectFrom('connections')
      .selectAll()
      .where('brand_id', '=', brand.id)
      .executeTakeFirstOrThrow();
    assert.match(row.config_enc, new RegExp(`^v1\\.${t.ctx.encryptor.keyId}\\.`));
    assert.ok(!row.config_enc.includes('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq'));
    assert.deepEqual(
      JSON.parse(t.ctx.encryptor.decrypt(row.config_enc, `connection:${brand.id}:telegram`)),
      CONFIGS.telegram,
    );
    assert.throws(() => t.ctx.encryptor.decrypt(row.config_enc, `connection:${brand.id}:google`));
  });

  const invalid: Array<[string, Record<string, unknown>, string, string?]> = [
    ['a missing type', { config: CONFIGS.google }, 'type', 'required'],
    ['an unknown type', { type: 'myspace', config: CONFIGS.google }, 'type', 'invalid_value'],
    ['the wallet as a connection', { type: 'solana', config: CONFIGS.google }, 'type', 'invalid_value'],
    ['a missing config', { type: 'google' }, 'config', 'required'],
    ['a config that is not an object', { type: 'google', config: 'secret' }, 'config', 'invalid_type'],
    [
      'a non-boolean enabled',
      { type: 'google', enabled: 'yes', config: CONFIGS.google },
      'enabled',
      'invalid_type',
    ],
    ['an unknown body field', { type: 'google', config: CONFIGS.google, id: 'x' }, 'id', 'unknown_field'],
    [
      'google without clientSecret',
      { type: 'google', config: { clientId: 'a' } },
      'config.clientSecret',
      'required',
    ],
    [
      'google without clientId',
      { type: 'google', config: { clientSecret: 'a' } },
      'config.clientId',
      'required',
    ],
    [
      'google with an empty clientId',
      { type: 'google', config: { clientId: '', clientSecret: 'a' } },
      'config.clientId',
      'too_short',
    ],
    [
      'google with an unknown config field',
      { type: 'google', config: { ...CONFIGS.google, tenant: 'common' } },
      'config.tenant',
      'unknown_field',
    ],
    [
      'scopes that are not a list',
      { type: 'discord', config: { clientId: 'a', clientSecret: 'b', scopes: 'identify' } },
      'config.scopes',
      'invalid_type',
    ],
    [
      'a scope with a space',
      { type: 'discord', config: { clientId: 'a', clientSecret: 'b', scopes: ['identify email'] } },
      'config.scopes.0',
      'invalid_format',
    ],
    [
      'a bad microsoft tenant',
      { type: 'microsoft', config: { clientId: 'a', clientSecret: 'b', tenant: 'a/b' } },
      'config.tenant',
      'invalid_format',
    ],
    [
      'apple without privateKey',
      { type: 'apple', config: { ...CONFIGS.apple, privateKey: undefined } },
      'config.privateKey',
      'required',
    ],
    [
      'apple with a bad teamId',
      { type: 'apple', config: { ...CONFIGS.apple, teamId: 'abc' } },
      'config.teamId',
      'invalid_format',
    ],
    [
      'apple with a bad keyId',
      { type: 'apple', config: { ...CONFIGS.apple, keyId: 'KEY' } },
      'config.keyId',
      'invalid_format',
    ],
    [
      'apple with an RSA key',
      { type: 'apple', config: { ...CONFIGS.apple, privateKey: rsa } },
      'config.privateKey',
      'invalid_format',
    ],
    [
      'apple with a key that is not PEM',
      { type: 'apple', config: { ...CONFIGS.apple, privateKey: 'not a key' } },
      'config.privateKey',
      'invalid_format',
    ],
    [
      'apple with a clientSecret',
      { type: 'apple', config: { ...CONFIGS.apple, clientSecret: 'x' } },
      'config.clientSecret',
      'unknown_field',
    ],
    [
      'telegram with a bad token',
      { type: 'telegram', config: { ...CONFIGS.telegram, botToken: 'abc' } },
      'config.botToken',
      'invalid_format',
    ],
    [
      'telegram with a username not ending in bot',
      { type: 'telegram', config: { ...CONFIGS.telegram, botUsername: 'example_login' } },
      'config.botUsername',
      'invalid_format',
    ],
    [
      'telegram with an OAuth config',
      { type: 'telegram', config: CONFIGS.google },
      'config.botToken',
      'required',
    ],
  ];
  for (const [what, body, field, code] of invalid) {
    it(`refuses ${what} with 400, without echoing the config`, async () => {
      const { url } = await brandWith();
      const res = await req(t, w.owner, 'PUT', url, body);
      expect400(res, field, code);
      for (const s of SECRETS) assert.ok(!res.raw.includes(s));
    });
  }

  it('enables and disables a connection, firing events only on a change', async () => {
    const { brand, url } = await brandWith('discord');
    const off = await req(t, w.owner, 'PATCH', `${url}/discord/enabled`, { enabled: false });
    assert.equal(off.status, 200, off.raw);
    assert.equal(off.body.enabled, false);
    assert.equal(off.body.type, 'discord');
    assert.equal(await resolveConnectionCredentials(t.ctx, brand.id, 'discord'), null);
    const again = await req(t, w.owner, 'PATCH', `${url}/discord/enabled`, { enabled: false });
    assert.equal(again.status, 200);
    const on = await req(t, w.owner, 'PATCH', `${url}/discord/enabled`, { enabled: true });
    assert.equal(on.body.enabled, true);
    const disabled = (await eventsOf(t, w.org.id, 'socialProvider.disabled')).filter(
      (e) => e.brand === brand.slug,
    );
    const enabled = (await eventsOf(t, w.org.id, 'socialProvider.enabled')).filter(
      (e) => e.brand === brand.slug,
    );
    assert.deepEqual(disabled, [{ brand: brand.slug, type: 'discord' }]);
    assert.deepEqual(enabled, [{ brand: brand.slug, type: 'discord' }]);
    expect400(await req(t, w.owner, 'PATCH', `${url}/discord/enabled`, {}), 'enabled', 'required');
    expect400(
      await req(t, w.owner, 'PATCH', `${url}/discord/enabled`, { enabled: 'no' }),
      'enabled',
      'invalid_type',
    );
    expect400(
      await req(t, w.owner, 'PATCH', `${url}/myspace/enabled`, { enabled: true }),
      'type',
      'invalid_value',
    );
    expect404(await req(t, w.owner, 'PATCH', `${url}/google/enabled`, { enabled: true }));
  });

  it('deletes a connection (204) and the brand falls back to the operator defaults', async () => {
    const { brand, url } = await brandWith('google', 'microsoft', 'discord');
    assert.equal((await resolveConnectionCredentials(t.ctx, brand.id, 'google'))?.source, 'brand');
    for (const type of ['google', 'microsoft', 'discord']) {
      const res = await req(t, w.owner, 'DELETE', `${url}/${type}`);
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
    }
    assert.equal((await req(t, w.owner, 'GET', url)).body.total, 0);
    expect404(await req(t, w.owner, 'DELETE', `${url}/google`));
    assert.deepEqual(await resolveConnectionCredentials(t.ctx, brand.id, 'google'), {
      source: 'default',
      config: { clientId: 'operator-google-id', clientSecret: 'operator-google-secret' },
    });
    assert.deepEqual(await resolveConnectionCredentials(t.ctx, brand.id, 'microsoft'), {
      source: 'default',
      config: { clientId: 'operator-ms-id', clientSecret: 'operator-ms-secret', tenant: 'common' },
    });
    // No operator credentials for discord, and only half of apple's.
    assert.equal(await resolveConnectionCredentials(t.ctx, brand.id, 'discord'), null);
    assert.equal(await resolveConnectionCredentials(t.ctx, brand.id, 'apple'), null);
    assert.ok((await auditOf(t, w.org.id, 'connection.deleted')).length >= 3);
  });

  it('resolves nothing for a deleted brand, whose connections are disabled', async () => {
    const { brand, url } = await brandWith('google', 'x');
    assert.equal((await req(t, w.owner, 'DELETE', brandUrl(w.org, brand.slug))).status, 204);
    assert.equal(await resolveConnectionCredentials(t.ctx, brand.id, 'google'), null);
    assert.equal(await resolveConnectionCredentials(t.ctx, brand.id, 'facebook'), null);
    expect404(await req(t, w.owner, 'GET', url));
    const rows = await t.ctx.db
      .selectFrom('connections')
      .select('enabled')
      .where('brand_id', '=', brand.id)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.enabled),
      [false, false],
    );
  });

  it('reads need org.connections.view, writes org.connections.edit', async () => {
    const { url } = await brandWith('google');
    const member = await createUser(t);
    await addMember(t, w.org, member, 'member');
    assert.equal((await req(t, member, 'GET', url)).status, 200);
    expect403(await req(t, member, 'PUT', url, { type: 'x', config: CONFIGS.x }), 'org.connections.edit');
    expect403(
      await req(t, member, 'PATCH', `${url}/google/enabled`, { enabled: false }),
      'org.connections.edit',
    );
    expect403(await req(t, member, 'DELETE', `${url}/google`), 'org.connections.edit');
    const brandsOnly = await memberWith(t, w.org, ['org.brands.view', 'org.brands.edit']);
    expect403(await req(t, brandsOnly, 'GET', url), 'org.connections.view');
    const editor = await memberWith(t, w.org, ['org.connections.edit']);
    assert.equal((await req(t, editor, 'PUT', url, { type: 'x', config: CONFIGS.x })).status, 201);
    assert.equal((await req(t, w.owner, 'GET', url)).body.total, 2);
  });

  it("answers 404 for another org's connections on every route", async () => {
    const { brand, url } = await brandWith('google');
    const o = w.otherOwner;
    const theirs = `${brandUrl(w.otherOrg, brand.slug)}/connections`;
    expect404(await req(t, o, 'GET', url));
    expect404(await req(t, o, 'PUT', url, { type: 'google', config: CONFIGS.google }));
    expect404(await req(t, o, 'PATCH', `${url}/google/enabled`, { enabled: false }));
    expect404(await req(t, o, 'DELETE', `${url}/google`));
    expect404(await req(t, o, 'GET', theirs));
    expect404(await req(t, o, 'PUT', theirs, { type: 'google', config: CONFIGS.google }));
    expect404(await req(t, o, 'DELETE', `${theirs}/google`));
    const list = await req(t, w.owner, 'GET', url);
    assert.equal(list.body.items[0].enabled, true);
  });

  it('never returns, audits or emits a config value', async () => {
    assert.ok(responses.length > 40);
    const stored = await auditAndEvents(t, w.org.id);
    assert.ok(stored.includes('socialProvider.upserted'));
    for (const secret of SECRETS) {
      for (const raw of responses)
        assert.ok(!raw.includes(secret), `a response carried ${secret.slice(0, 6)}…`);
      assert.ok(!stored.includes(secret), `the audit log or events carried ${secret.slice(0, 6)}…`);
    }
    assert.ok(!stored.includes('google-client.apps.example'));
  });
});
