import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { approveDevice } from '../../src/oidc/device-store.js';
import { UNMET_REQUIREMENT } from '../../src/oidc/gates.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';
import { seedOrg, type TestOrg } from '../helpers/fixtures.js';
import {
  basicAuth,
  createBrand,
  DEVICE_GRANT,
  form,
  subscribeTokenEvents,
  type TestBrand,
} from '../helpers/oidc.js';
import { authorizeQuery, cookieHeader, pkce, type SeededClient, walletSignIn } from '../helpers/signin.js';
import { createTestWallet, type TestWallet } from '../helpers/wallet.js';
import { FakeSolanaRpc } from './fake-rpc.js';

/**
 * DESIGN §3 "Gates in tokens": scopes bound to a gate policy, apps that require one, the `gates`
 * claim, on the fake Solana RPC and the injectable clock (balances are cached 5 minutes).
 */
describe('gates in tokens', () => {
  let t: TestApp;
  let rpc: FakeSolanaRpc;
  let owner: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let otherOrg: TestOrg;
  let brand: TestBrand;
  let mint: string;
  let policyId: string;
  let otherPolicyId: string;
  /** An app listing the gated scope `vault:read` and `gates`, requiring nothing. */
  let open: SeededClient & { clientSecret: string };
  /** An app requiring the policy to sign in (device flow too). */
  let members: SeededClient & { clientSecret: string };
  const CACHE_TTL = 300;

  const orgUrl = (o: TestOrg = org) => `/identity/organizations/${o.slug}`;
  const scopesUrl = () => `${orgUrl()}/brands/${brand.slug}/scopes`;
  const appsUrl = () => `${orgUrl()}/brands/${brand.slug}/apps`;

  function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, user = owner) {
    return t.app.inject({
      method,
      url,
      headers: user.auth,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  }

  function expectField400(res: { statusCode: number; body: string }, field: string) {
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    assert.equal(body.error.code, 'validation_failed');
    assert.ok(
      body.error.details.fields.some((f: { field: string }) => f.field === field),
      res.body,
    );
  }

  async function policy(o: TestOrg, user: TestUser, minHoldings: string, tokenMint: string, name: string) {
    const gate = await call(
      'POST',
      `${orgUrl(o)}/token-gates`,
      { name: `${name} gate`, mintAddress: tokenMint, minHoldings },
      user,
    );
    assert.equal(gate.statusCode, 201, gate.body);
    const res = await call(
      'POST',
      `${orgUrl(o)}/gate-policies`,
      { name, description: 'Members of the gold club', rule: { gate: json(gate).id } },
      user,
    );
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id as string;
  }

  async function app(fields: Record<string, unknown>) {
    const res = await call('POST', appsUrl(), {
      name: 'Vault',
      type: 'web',
      redirectUris: ['https://vault.example/callback'],
      allowedGrantTypes: ['authorization_code', 'refresh_token', DEVICE_GRANT],
      allowedScopes: ['openid', 'offline_access', 'gates', 'vault:read'],
      ...fields,
    });
    assert.equal(res.statusCode, 201, res.body);
    const a = json(res);
    return {
      orgId: org.id,
      brandId: brand.id,
      brandSlug: brand.slug,
      brandName: `Brand ${brand.slug}`,
      appId: a.id,
      clientId: a.clientId,
      clientSecret: a.clientSecret,
      redirectUri: 'https://vault.example/callback',
    };
  }

  function token(client: { clientId: string; clientSecret: string }, fields: Record<string, string>) {
    const f = form(fields);
    return t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { ...f.headers, ...basicAuth(client.clientId, client.clientSecret) },
      payload: f.payload,
    });
  }

  /** A new wallet (on chain, holding nothing) signs in to `client` for `scope`. */
  async function signIn(client: SeededClient, scope: string, wallet: TestWallet = createTestWallet()) {
    rpc.addWallet(wallet.address);
    const { verifier, challenge } = pkce();
    const res = await t.app.inject(`/oauth2/authorize?${authorizeQuery(client, { scope }, challenge)}`);
    assert.equal(res.statusCode, 302, res.body);
    const id = String(res.headers.location).split('/signin/')[1];
    const { res: verify, jar } = await walletSignIn(t, id, wallet);
    assert.equal(verify.statusCode, 200, verify.body);
    return { id, jar, verifier, verify: json(verify), wallet };
  }

  /** Consent allowed, the code redeemed: the token response. */
  async function consentAndRedeem(
    client: SeededClient & { clientSecret: string },
    s: { id: string; jar: Record<string, string>; verifier: string },
  ) {
    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${s.id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(consent.statusCode, 200, consent.body);
    const code = new URL(json(consent).redirectTo).searchParams.get('code') as string;
    const res = await token(client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      code_verifier: s.verifier,
    });
    assert.equal(res.statusCode, 200, res.body);
    return json(res);
  }

  async function refreshedEvents(userId: string) {
    const rows = await t.ctx.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'token.refreshed')
      .execute();
    return rows.map((r) => r.data as Record<string, unknown>).filter((d) => d.user === userId);
  }

  before(async () => {
    rpc = await new FakeSolanaRpc().start();
    t = await buildTestApp({ env: { SOLANA_RPC_URL: rpc.url, RATE_LIMIT_MULTIPLIER: '1000' } });
    owner = await createUser(t);
    outsider = await createUser(t);
    org = await seedOrg(t, owner);
    otherOrg = await seedOrg(t, outsider);
    brand = await createBrand(t, { orgId: org.id });
    await subscribeTokenEvents(t, org.id);
    mint = rpc.addMint();
    policyId = await policy(org, owner, '10', mint, 'Gold club');
    otherPolicyId = await policy(otherOrg, outsider, '1', rpc.addMint(), 'Elsewhere');
    const scope = await call('POST', scopesUrl(), {
      name: 'vault:read',
      description: 'Open the vault',
      gatePolicyId: policyId,
    });
    assert.equal(scope.statusCode, 201, scope.body);
    assert.equal(json(scope).gatePolicyId, policyId);
    open = await app({});
    members = await app({ name: 'Members only', requiredGatePolicyId: policyId });
  });
  after(async () => {
    await t.close();
    await rpc.stop();
  });

  it('scopes and apps name only a gate policy of their org; reads return it; a named policy cannot be deleted', async () => {
    expectField400(
      await call('POST', scopesUrl(), { name: 'x:one', description: 'x', gatePolicyId: 'gpol_nope' }),
      'gatePolicyId',
    );
    expectField400(
      await call('POST', scopesUrl(), { name: 'x:two', description: 'x', gatePolicyId: otherPolicyId }),
      'gatePolicyId',
    );
    const plain = await call('POST', scopesUrl(), { name: 'x:three', description: 'x' });
    assert.equal(json(plain).gatePolicyId, null);
    expectField400(
      await call('PATCH', `${scopesUrl()}/x:three`, { gatePolicyId: otherPolicyId }),
      'gatePolicyId',
    );
    const gated = await call('PATCH', `${scopesUrl()}/x:three`, { gatePolicyId: policyId });
    assert.equal(gated.statusCode, 200, gated.body);
    assert.equal(json(await call('GET', `${scopesUrl()}/x:three`)).gatePolicyId, policyId);
    const listed = json(await call('GET', scopesUrl())).items;
    assert.equal(listed.find((s: { name: string }) => s.name === 'vault:read').gatePolicyId, policyId);
    const ungated = await call('PATCH', `${scopesUrl()}/x:three`, { gatePolicyId: null });
    assert.equal(json(ungated).gatePolicyId, null);

    expectField400(
      await call('POST', appsUrl(), {
        name: 'Bad',
        type: 'web',
        redirectUris: ['https://bad.example/cb'],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid'],
        requiredGatePolicyId: otherPolicyId,
      }),
      'requiredGatePolicyId',
    );
    expectField400(
      await call('PATCH', `${appsUrl()}/${open.clientId}`, { requiredGatePolicyId: 'gpol_nope' }),
      'requiredGatePolicyId',
    );
    const read = json(await call('GET', `${appsUrl()}/${members.clientId}`));
    assert.equal(read.requiredGatePolicyId, policyId);
    assert.equal(json(await call('GET', `${appsUrl()}/${open.clientId}`)).requiredGatePolicyId, null);

    const del = await call('DELETE', `${orgUrl()}/gate-policies/${policyId}`);
    assert.equal(del.statusCode, 409, del.body);
    assert.equal(json(del).error.code, 'conflict');
  });

  it('a user with no linked wallet passes no policy (the engine port, as the token path calls it)', async () => {
    const walletless = await createUser(t);
    const answers = await t.ctx.stores.gatePolicies.evaluate(org.slug, walletless.id, [policyId]);
    assert.deepEqual([...answers], [[policyId, false]]);
    const elsewhere = await t.ctx.stores.gatePolicies.evaluate(org.slug, walletless.id, [otherPolicyId]);
    assert.deepEqual([...elsewhere], [[otherPolicyId, false]], "another org's policy never passes here");
  });

  it('discovery lists the gates scope and claim', async () => {
    const doc = json(await t.app.inject('/.well-known/openid-configuration'));
    assert.ok(doc.scopes_supported.includes('gates'));
    assert.ok(doc.claims_supported.includes('gates'));
  });

  it('a gated scope comes with a holding and goes without it, at refresh (token.refreshed says so)', async () => {
    const s = await signIn(open, 'openid offline_access gates vault:read');
    assert.equal(s.verify.step, 'consent');
    const first = await consentAndRedeem(open, s);
    assert.equal(first.scope, 'openid offline_access gates', 'no holding: the gated scope is left out');
    assert.deepEqual(decodeJwt(first.access_token).gates, []);
    assert.deepEqual(decodeJwt(first.id_token).gates, []);
    const userId = decodeJwt(first.access_token).sub as string;

    rpc.setBalance(s.wallet.address, mint, '10');
    const cached = json(
      await token(open, { grant_type: 'refresh_token', refresh_token: first.refresh_token }),
    );
    assert.equal(cached.scope, 'openid offline_access gates', 'the balance read 0 is cached ≤ 5 minutes');

    t.clock.advance(CACHE_TTL + 1);
    const gained = json(
      await token(open, { grant_type: 'refresh_token', refresh_token: cached.refresh_token }),
    );
    assert.equal(gained.scope, 'openid offline_access gates vault:read');
    assert.equal(decodeJwt(gained.access_token).scope, 'openid offline_access gates vault:read');
    assert.deepEqual(decodeJwt(gained.access_token).gates, [policyId]);
    assert.deepEqual(decodeJwt(gained.id_token).gates, [policyId]);

    rpc.setBalance(s.wallet.address, mint, '9');
    t.clock.advance(CACHE_TTL + 1);
    const lost = await token(open, { grant_type: 'refresh_token', refresh_token: gained.refresh_token });
    assert.equal(lost.statusCode, 200, lost.body);
    assert.equal(json(lost).scope, 'openid offline_access gates');
    assert.deepEqual(decodeJwt(json(lost).access_token).gates, []);

    const events = await refreshedEvents(userId);
    assert.deepEqual(
      events.map((e) => [e.scopes, e.droppedScopes]),
      [
        [['openid', 'offline_access', 'gates'], ['vault:read']],
        [['openid', 'offline_access', 'gates', 'vault:read'], undefined],
        [['openid', 'offline_access', 'gates'], ['vault:read']],
      ],
    );
  });

  it('a client-credentials token never carries a gated scope: no user, no wallet to check', async () => {
    const plain = await call('POST', scopesUrl(), { name: 'vault:list', description: 'List the vault' });
    assert.equal(plain.statusCode, 201, plain.body);
    const res = await call('POST', appsUrl(), {
      name: 'Vault robot',
      type: 'm2m',
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['vault:read', 'vault:list'],
    });
    assert.equal(res.statusCode, 201, res.body);
    const robot = { clientId: json(res).clientId as string, clientSecret: json(res).clientSecret as string };
    const asked = await token(robot, { grant_type: 'client_credentials', scope: 'vault:read' });
    assert.equal(asked.statusCode, 400, asked.body);
    assert.equal(json(asked).error, 'invalid_scope');
    const byDefault = await token(robot, { grant_type: 'client_credentials' });
    assert.equal(byDefault.statusCode, 200, byDefault.body);
    assert.equal(json(byDefault).scope, 'vault:list');
    assert.equal(decodeJwt(json(byDefault).access_token).scope, 'vault:list');
  });

  it('gating a scope takes effect at once for a client already cached, and ungating it too', async () => {
    const plain = await call('POST', scopesUrl(), { name: 'vault:audit', description: 'Audit the vault' });
    assert.equal(plain.statusCode, 201, plain.body);
    const res = await call('POST', appsUrl(), {
      name: 'Vault auditor',
      type: 'm2m',
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['vault:audit'],
    });
    assert.equal(res.statusCode, 201, res.body);
    const robot = { clientId: json(res).clientId as string, clientSecret: json(res).clientSecret as string };
    const ask = () => token(robot, { grant_type: 'client_credentials', scope: 'vault:audit' });
    assert.equal((await ask()).statusCode, 200, 'ungated: granted, and the client is now cached');
    const gated = await call('PATCH', `${scopesUrl()}/vault:audit`, { gatePolicyId: policyId });
    assert.equal(gated.statusCode, 200, gated.body);
    // No clock moved: the cached client was dropped when the change committed.
    const refused = await ask();
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).error, 'invalid_scope');
    assert.equal((await call('PATCH', `${scopesUrl()}/vault:audit`, { gatePolicyId: null })).statusCode, 200);
    assert.equal((await ask()).statusCode, 200);
  });

  it('the gates claim comes only with the gates scope', async () => {
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    rpc.setBalance(wallet.address, mint, '50');
    const s = await signIn(open, 'openid offline_access vault:read', wallet);
    const tokens = await consentAndRedeem(open, s);
    assert.equal(tokens.scope, 'openid offline_access vault:read');
    assert.equal(decodeJwt(tokens.access_token).gates, undefined);
    assert.equal(decodeJwt(tokens.id_token).gates, undefined);
  });

  it('an app that requires a policy refuses sign-in before consent, with a page in the policy’s words', async () => {
    const s = await signIn(members, 'openid offline_access');
    assert.equal(s.verify.step, 'done');
    assert.equal(s.verify.redirectTo, `${t.ctx.config.baseUrl}/signin/${s.id}/unmet`);
    const page = await t.app.inject({
      url: `/signin/${s.id}/unmet`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(page.statusCode, 403, page.body);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.ok(page.body.includes('Gold club') && page.body.includes('Members of the gold club'));
    assert.ok(!page.body.includes(mint), 'no mint address');
    assert.ok(!/\b10\b/.test(page.body.replace(/<[^>]*>/g, ' ')), 'no amount');
    const back = /id="unmet-back" href="([^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(back, page.body);
    const url = new URL(back);
    assert.equal(url.origin + url.pathname, members.redirectUri);
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.equal(url.searchParams.get('error_description'), UNMET_REQUIREMENT);
    assert.ok(url.searchParams.get('state'));

    // Consent cannot go around it; another browser sees no page.
    const consent = await t.app.inject({
      method: 'POST',
      url: `/interactions/${s.id}/consent`,
      payload: { decision: 'allow' },
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(json(consent).redirectTo, `${t.ctx.config.baseUrl}/signin/${s.id}/unmet`);
    assert.equal((await t.app.inject(`/signin/${s.id}/unmet`)).statusCode, 404);

    // With the session: prompt=none is access_denied at once; otherwise the page again.
    const none = await t.app.inject({
      url: `/oauth2/authorize?${authorizeQuery(members, { prompt: 'none', scope: 'openid' })}`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    const refused = new URL(String(none.headers.location));
    assert.equal(refused.searchParams.get('error'), 'access_denied');
    assert.equal(refused.searchParams.get('error_description'), UNMET_REQUIREMENT);
    const again = await t.app.inject({
      url: `/oauth2/authorize?${authorizeQuery(members, { scope: 'openid' })}`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.match(String(again.headers.location), /\/signin\/[A-Za-z0-9]+\/unmet$/);
  });

  it('the device flow refuses a user whose wallets fail the requirement: access_denied for the device', async () => {
    const s = await signIn(members, 'openid');
    const started = await t.app.inject({
      method: 'POST',
      url: '/oauth2/device/authorize',
      ...form({ client_id: members.clientId, scope: 'openid' }),
    });
    assert.equal(started.statusCode, 200, started.body);
    const { device_code, user_code } = json(started);
    const page = await t.app.inject({
      url: `/device?user_code=${user_code}`,
      headers: { cookie: cookieHeader(s.jar) },
    });
    assert.equal(page.statusCode, 403, page.body);
    assert.ok(page.body.includes('Gold club'));
    const poll = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.equal(poll.statusCode, 400, poll.body);
    assert.deepEqual(json(poll), { error: 'access_denied', error_description: UNMET_REQUIREMENT });
  });

  it('a device sign-in that fails the requirement right after signing in: the page, and access_denied for the device', async () => {
    const started = await t.app.inject({
      method: 'POST',
      url: '/oauth2/device/authorize',
      ...form({ client_id: members.clientId, scope: 'openid' }),
    });
    const { device_code, user_code } = json(started);
    const entry = await t.app.inject(`/device?user_code=${user_code}`);
    assert.equal(entry.statusCode, 302, entry.body);
    const id = String(entry.headers.location).split('/signin/')[1];
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    const { res, jar } = await walletSignIn(t, id, wallet);
    assert.equal(json(res).redirectTo, `${t.ctx.config.baseUrl}/signin/${id}/unmet`);
    const page = await t.app.inject({ url: `/signin/${id}/unmet`, headers: { cookie: cookieHeader(jar) } });
    assert.equal(page.statusCode, 403, page.body);
    assert.ok(page.body.includes('id="unmet-device"') && !page.body.includes('id="unmet-back"'));
    const poll = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.deepEqual(json(poll), { error: 'access_denied', error_description: UNMET_REQUIREMENT });
  });

  it('a device poll whose gate check cannot reach the RPC consumes nothing: the next poll gets the tokens', async () => {
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    rpc.setBalance(wallet.address, mint, '12');
    await signIn(members, 'openid', wallet);
    const { user_id } = await t.ctx.db
      .selectFrom('user_public_keys')
      .select('user_id')
      .where('address', '=', wallet.address)
      .executeTakeFirstOrThrow();
    const started = await t.app.inject({
      method: 'POST',
      url: '/oauth2/device/authorize',
      ...form({ client_id: members.clientId, scope: 'openid' }),
    });
    const { device_code, user_code, interval } = json(started);
    assert.equal(await approveDevice(t.ctx, user_code, user_id, t.clock.nowSec()), true);
    // The balance cache is cold and the RPC fails: the poll answers 503 and leaves the approval.
    t.clock.advance(CACHE_TTL + 1);
    rpc.mode = 'http500';
    try {
      const failed = await token(members, { grant_type: DEVICE_GRANT, device_code });
      assert.equal(failed.statusCode, 503, failed.body);
      assert.equal(json(failed).error, 'temporarily_unavailable');
    } finally {
      rpc.mode = 'ok';
    }
    t.clock.advance(interval + 1);
    const ok = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(decodeJwt(json(ok).access_token).sub, user_id);
    t.clock.advance(interval + 1);
    const again = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.equal(json(again).error, 'invalid_grant', 'consumed once it issued');
  });

  it('a sign-in whose requirement cannot be checked (RPC down) answers 503 in the envelope, and the same browser can go on once it is back', async () => {
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    rpc.setBalance(wallet.address, mint, '12');
    const { verifier, challenge } = pkce();
    const res = await t.app.inject(
      `/oauth2/authorize?${authorizeQuery(members, { scope: 'openid' }, challenge)}`,
    );
    const id = String(res.headers.location).split('/signin/')[1];
    t.clock.advance(CACHE_TTL + 1);
    rpc.mode = 'http500';
    let jar: Record<string, string>;
    try {
      const failed = await walletSignIn(t, id, wallet);
      jar = failed.jar;
      assert.equal(failed.res.statusCode, 503, failed.res.body);
      assert.equal(json(failed.res).error.code, 'temporarily_unavailable');
    } finally {
      rpc.mode = 'ok';
    }
    // The browser signed in (its session cookie came back) and the interaction carries the user: the
    // sign-in page goes on from where it stopped, to consent, then the code.
    const page = await t.app.inject({ url: `/signin/${id}`, headers: { cookie: cookieHeader(jar) } });
    assert.ok([200, 302].includes(page.statusCode), page.body);
    const tokens = await consentAndRedeem(members, { id, jar, verifier });
    assert.equal(decodeJwt(tokens.id_token).sub, decodeJwt(tokens.access_token).sub);
  });

  it('the device page and its decisions, when the requirement cannot be checked: a 503 page or envelope, nothing decided', async () => {
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    rpc.setBalance(wallet.address, mint, '12');
    const { jar } = await signIn(members, 'openid', wallet);
    const started = await t.app.inject({
      method: 'POST',
      url: '/oauth2/device/authorize',
      ...form({ client_id: members.clientId, scope: 'openid' }),
    });
    const { device_code, user_code, interval } = json(started);
    const page = () =>
      t.app.inject({
        url: `/device?user_code=${encodeURIComponent(user_code)}`,
        headers: { cookie: cookieHeader(jar) },
      });
    const decide = (body: Record<string, string>, asForm: boolean) =>
      t.app.inject({
        method: 'POST',
        url: '/device/approve',
        ...(asForm
          ? {
              payload: new URLSearchParams(body).toString(),
              headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
            }
          : { payload: body, headers: { cookie: cookieHeader(jar) } }),
      });
    const confirm = await page();
    assert.equal(confirm.statusCode, 200, confirm.body);
    const csrf = /name="csrf_token" value="([0-9a-f]+)"/.exec(confirm.body)?.[1] as string;
    const formCode = /name="user_code" value="([^"]+)"/.exec(confirm.body)?.[1] as string;
    t.clock.advance(CACHE_TTL + 1);
    rpc.mode = 'http500';
    try {
      const down = await page();
      assert.equal(down.statusCode, 503, down.body);
      assert.match(String(down.headers['content-type']), /^text\/html/);
      assert.ok(down.body.includes('temporarily_unavailable'), down.body);
      const viaForm = await decide({ user_code, csrf_token: csrf }, true);
      assert.equal(viaForm.statusCode, 503, viaForm.body);
      assert.match(String(viaForm.headers['content-type']), /^text\/html/);
      // Both pages say why in their own line and offer to try again (the same code's page).
      for (const res of [down, viaForm]) {
        assert.match(
          res.body,
          /The wallet requirements cannot be checked right now\. Try again in a moment\./,
        );
        assert.ok(res.body.includes(`href="/device?user_code=${formCode}"`), res.body);
      }
      const viaJson = await decide({ user_code }, false);
      assert.equal(viaJson.statusCode, 503, viaJson.body);
      assert.equal(json(viaJson).error.code, 'temporarily_unavailable');
    } finally {
      rpc.mode = 'ok';
    }
    const pending = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.equal(json(pending).error, 'authorization_pending', 'nothing was decided');
    const approved = await decide({ user_code, csrf_token: csrf }, true);
    assert.equal(approved.statusCode, 200, approved.body);
    t.clock.advance(interval + 1);
    const tokens = await token(members, { grant_type: DEVICE_GRANT, device_code });
    assert.equal(tokens.statusCode, 200, tokens.body);
  });

  it('a user who meets the requirement signs in, gets the required policy in gates, and loses the refresh when it stops passing', async () => {
    const wallet = createTestWallet();
    rpc.addWallet(wallet.address);
    rpc.setBalance(wallet.address, mint, '12');
    const s = await signIn(members, 'openid offline_access gates vault:read', wallet);
    assert.equal(s.verify.step, 'consent');
    const tokens = await consentAndRedeem(members, s);
    assert.equal(tokens.scope, 'openid offline_access gates vault:read');
    assert.deepEqual(decodeJwt(tokens.access_token).gates, [policyId]);

    rpc.setBalance(wallet.address, mint, '0');
    t.clock.advance(CACHE_TTL + 1);
    const res = await token(members, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(json(res), { error: 'invalid_grant', error_description: UNMET_REQUIREMENT });
  });
});
