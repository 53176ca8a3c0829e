import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { invalidateClient } from '../../src/oidc/clients.js';
import { type TestApp, buildTestApp, json } from '../helpers/app.js';
import {
  type TestBrand,
  type TestClient,
  basicAuth,
  createApp,
  createBrand,
  disableApp,
  form,
  holdsJwt,
  subscribeTokenEvents,
} from '../helpers/oidc.js';

let t: TestApp;
let brand: TestBrand;
let service: TestClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' } });
  brand = await createBrand(t);
  await subscribeTokenEvents(t, brand.orgId);
  service = await createApp(t, brand, {
    grants: ['client_credentials'],
    scopes: ['orders:read', 'orders:write', 'openid'],
  });
});
after(() => t.close());

function cc(fields: Record<string, string | undefined>, headers: Record<string, string> = {}, app = t) {
  const f = form({ grant_type: 'client_credentials', ...fields });
  return app.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { ...f.headers, ...headers },
    payload: f.payload,
  });
}

describe('client_credentials grant', () => {
  test('with client_secret_post: a brand-audience JWT with the client as sub, no user, no refresh, no ID token', async () => {
    const res = await cc({
      client_id: service.clientId,
      client_secret: service.clientSecret,
      scope: 'orders:read',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.scope, 'orders:read');
    assert.equal(body.expires_in, 3600);
    assert.equal(decodeProtectedHeader(body.access_token).typ, 'at+jwt');
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.sub, service.clientId);
    assert.equal(claims.client_id, service.clientId);
    assert.equal(claims.aud, brand.slug);
    assert.equal(claims.scope, 'orders:read');
    assert.equal(claims.auth_time, undefined);
    assert.equal(claims.exp, t.clock.nowSec() + 3600);
  });

  test('with client_secret_basic', async () => {
    const res = await cc(
      { scope: 'orders:read orders:write' },
      basicAuth(service.clientId, service.clientSecret),
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).scope, 'orders:read orders:write');
  });

  test('without scope: the app’s allowed scopes that need no user', async () => {
    const res = await cc({ client_id: service.clientId, client_secret: service.clientSecret });
    assert.equal(json(res).scope, 'orders:read orders:write');
  });

  test('a scope outside allowedScopes, or a user-only scope, is invalid_scope', async () => {
    for (const scope of ['orders:delete', 'orders:read admin', 'openid', 'offline_access']) {
      const res = await cc({ client_id: service.clientId, client_secret: service.clientSecret, scope });
      assert.equal(res.statusCode, 400, scope);
      assert.equal(json(res).error, 'invalid_scope', scope);
    }
    const malformed = await cc({
      client_id: service.clientId,
      client_secret: service.clientSecret,
      scope: 'a"b',
    });
    assert.equal(json(malformed).error, 'invalid_scope');
  });

  test('a public client cannot use it (no secret): invalid_client / unauthorized_client', async () => {
    const pub = await createApp(t, brand, { confidential: false, grants: ['authorization_code'] });
    const res = await cc({ client_id: pub.clientId, scope: 'orders:read' });
    assert.equal(json(res).error, 'unauthorized_client');
  });

  test('token.issued is recorded only for orgs where a webhook subscribes to it', async () => {
    const quiet = await createBrand(t);
    const app = await createApp(t, quiet, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const count = async () =>
      (
        await t.ctx.db
          .selectFrom('events')
          .select('id')
          .where('type', '=', 'token.issued')
          .where('org_id', '=', quiet.orgId)
          .execute()
      ).length;
    const issue = () =>
      cc({ client_id: app.clientId, client_secret: app.clientSecret, scope: 'orders:read' });
    assert.equal((await issue()).statusCode, 200);
    assert.equal(await count(), 0);
    await subscribeTokenEvents(t, quiet.orgId);
    assert.equal((await issue()).statusCode, 200);
    assert.equal(await count(), 1);
    const deliveries = await t.ctx.db
      .selectFrom('webhook_deliveries' as never)
      .select('id' as never)
      .where('org_id' as never, '=', quiet.orgId as never)
      .execute();
    assert.equal(deliveries.length, 1);
  });

  test('every issuance records token.issued with user null and grant client_credentials', async () => {
    const before = await t.ctx.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'token.issued')
      .execute();
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        cc({ client_id: service.clientId, client_secret: service.clientSecret, scope: 'orders:read' }),
      ),
    );
    for (const r of results) assert.equal(r.statusCode, 200);
    const rows = await t.ctx.db
      .selectFrom('events')
      .select(['data', 'org_id'])
      .where('type', '=', 'token.issued')
      .execute();
    assert.equal(rows.length, before.length + 12);
    const last = rows.at(-1)!;
    assert.equal(last.org_id, brand.orgId);
    assert.deepEqual(last.data, {
      user: null,
      app: service.clientId,
      scopes: ['orders:read'],
      grant: 'client_credentials',
    });
    for (const r of rows) assert.ok(!holdsJwt(r.data), JSON.stringify(r.data));
  });

  test('writes no row per token; revoked by jti at /oauth2/revoke, and with its app', async () => {
    const quiet = await createBrand(t);
    const app = await createApp(t, quiet, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const tables = ['access_tokens', 'refresh_tokens', 'revoked_tokens', 'events', 'audit_log'] as const;
    const counts = async () =>
      Promise.all(
        tables.map(async (table) =>
          Number(
            (
              await t.ctx.db
                .selectFrom(table)
                .select((eb) => eb.fn.countAll<string>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ),
        ),
      );
    const issue = async () => {
      const res = await cc({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scope: 'orders:read',
      });
      assert.equal(res.statusCode, 200, res.body);
      return json(res).access_token as string;
    };
    const introspect = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth2/introspect',
        ...form({ token, client_id: app.clientId, client_secret: app.clientSecret }),
      });
    const before = await counts();
    const tokens = [await issue(), await issue(), await issue()];
    assert.deepEqual(await counts(), before, 'issuing wrote nothing');

    // Revoked one by one: its jti (until its exp) in revoked_tokens, refused by the issuer at once.
    const revoke = form({ token: tokens[0], client_id: app.clientId, client_secret: app.clientSecret });
    assert.equal((await t.app.inject({ method: 'POST', url: '/oauth2/revoke', ...revoke })).statusCode, 200);
    const jti = decodeJwt(tokens[0]).jti as string;
    const row = await t.ctx.db
      .selectFrom('revoked_tokens')
      .selectAll()
      .where('jti', '=', jti)
      .executeTakeFirstOrThrow();
    assert.equal(row.expires_at.getTime(), (decodeJwt(tokens[0]).exp as number) * 1000);
    assert.deepEqual(json(await introspect(tokens[0])), { active: false });
    assert.equal(json(await introspect(tokens[1])).active, true, 'the others stay valid');

    // A rotated secret stops new tokens; tokens already issued live until their exp.
    await t.ctx.db
      .updateTable('apps')
      .set({ client_secret_hash: 'rotated' })
      .where('id', '=', app.appId)
      .execute();
    invalidateClient(t.ctx, app.clientId);
    const refused = await cc({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scope: 'orders:read',
    });
    assert.equal(refused.statusCode, 401);
    const rs = await createApp(t, quiet, { grants: ['client_credentials'], scopes: ['orders:read'] });
    const introspectAs = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth2/introspect',
        ...form({ token, client_id: rs.clientId, client_secret: rs.clientSecret }),
      });
    assert.equal(json(await introspectAs(tokens[1])).active, true);

    // Disabling (or deleting) the app refuses every token it holds, with no row per token.
    await disableApp(t, app);
    assert.deepEqual(json(await introspectAs(tokens[1])), { active: false });
    assert.deepEqual(json(await introspectAs(tokens[2])), { active: false });
  });

  test('tokens verify against the JWKS served at /.well-known/jwks.json', async () => {
    const { createLocalJWKSet, jwtVerify } = await import('jose');
    const jwks = json(await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
    const body = json(
      await cc({ client_id: service.clientId, client_secret: service.clientSecret, scope: 'orders:read' }),
    );
    const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      issuer: t.ctx.config.issuer,
      audience: brand.slug,
      typ: 'at+jwt',
      currentDate: t.clock.now(),
    });
    assert.equal(payload.client_id, service.clientId);
  });
});

describe('token endpoint rate limit', () => {
  test('30 per minute per client_id, 429 rate_limited with Retry-After; other clients unaffected', async () => {
    const t2 = await buildTestApp();
    try {
      const b2 = await createBrand(t2);
      const a = await createApp(t2, b2, { grants: ['client_credentials'] });
      const b = await createApp(t2, b2, { grants: ['client_credentials'] });
      const call = (c: TestClient, secret = c.clientSecret) =>
        cc({ client_id: c.clientId, client_secret: secret, scope: 'orders:read' }, {}, t2);
      // Wrong secrets do not spend the client's budget (anyone can send them); they have their own.
      for (let i = 0; i < 5; i++) assert.equal((await call(a, 'wrong')).statusCode, 401);
      for (let i = 0; i < 30; i++) assert.equal((await call(a)).statusCode, 200);
      const res = await call(a);
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).error, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) >= 1);
      assert.equal(res.headers['ratelimit-limit'], '30');
      assert.equal((await call(b)).statusCode, 200);
    } finally {
      await t2.close();
    }
  });
});
