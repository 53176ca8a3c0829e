import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { brandUrl, call, createBrand, expect400, expect404, memberWith, type World, world } from './setup.js';

/** The logout fields of apps (DESIGN.md §3): postLogoutRedirectUris and backchannelLogoutUri. */
describe('apps: logout fields', () => {
  let t: TestApp;
  let strict: TestApp;
  let w: World;
  let appsUrl: string;

  const webApp = (fields: Record<string, unknown> = {}) => ({
    name: 'Logout app',
    type: 'web',
    redirectUris: ['https://app.example/callback'],
    allowedGrantTypes: ['authorization_code', 'refresh_token'],
    allowedScopes: ['openid'],
    ...fields,
  });

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    strict = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '100' } });
    w = await world(t);
    const brand = await createBrand(t, w.owner, w.org);
    appsUrl = `${brandUrl(w.org, brand.slug)}/apps`;
  });
  after(async () => {
    await t.close();
    await strict.close();
  });

  it('are empty by default, set on create, returned on reads and changed by PATCH', async () => {
    const plain = await call(t, w.owner, 'POST', appsUrl, webApp());
    assert.equal(plain.status, 201, plain.raw);
    assert.deepEqual(plain.body.postLogoutRedirectUris, []);
    assert.equal(plain.body.backchannelLogoutUri, null);

    const created = await call(
      t,
      w.owner,
      'POST',
      appsUrl,
      webApp({
        postLogoutRedirectUris: ['https://app.example/signed-out'],
        backchannelLogoutUri: 'https://app.example/backchannel',
      }),
    );
    assert.equal(created.status, 201, created.raw);
    const url = `${appsUrl}/${created.body.clientId}`;
    const read = await call(t, w.owner, 'GET', url);
    assert.deepEqual(read.body.postLogoutRedirectUris, ['https://app.example/signed-out']);
    assert.equal(read.body.backchannelLogoutUri, 'https://app.example/backchannel');

    const patched = await call(t, w.owner, 'PATCH', url, {
      postLogoutRedirectUris: ['https://app.example/bye', 'https://app.example/bye?x=1'],
      backchannelLogoutUri: null,
    });
    assert.equal(patched.status, 200, patched.raw);
    assert.deepEqual(patched.body.postLogoutRedirectUris, [
      'https://app.example/bye',
      'https://app.example/bye?x=1',
    ]);
    assert.equal(patched.body.backchannelLogoutUri, null);
    const list = await call(t, w.owner, 'GET', appsUrl);
    const listed = list.body.items.find((a: { clientId: string }) => a.clientId === created.body.clientId);
    assert.deepEqual(listed.postLogoutRedirectUris, patched.body.postLogoutRedirectUris);
  });

  it('follow the redirect URI rules and the webhook URL rules', async () => {
    expect400(
      await call(t, w.owner, 'POST', appsUrl, webApp({ postLogoutRedirectUris: ['ftp://app.example/out'] })),
      'postLogoutRedirectUris.0',
    );
    expect400(
      await call(
        t,
        w.owner,
        'POST',
        appsUrl,
        webApp({ postLogoutRedirectUris: ['https://app.example/#frag'] }),
      ),
      'postLogoutRedirectUris.0',
    );
    expect400(
      await call(t, w.owner, 'POST', appsUrl, webApp({ backchannelLogoutUri: 'http://app.example/bc' })),
      'backchannelLogoutUri',
    );
    expect400(
      await call(t, w.owner, 'POST', appsUrl, webApp({ backchannelLogoutUri: 'https://u:p@app.example/bc' })),
      'backchannelLogoutUri',
    );
    const dup = await call(
      t,
      w.owner,
      'POST',
      appsUrl,
      webApp({ postLogoutRedirectUris: ['https://a.example/x', 'https://a.example/x'] }),
    );
    assert.equal(dup.status, 400, dup.raw);
  });

  it('a loopback back-channel URI only under WEBHOOK_ALLOW_PRIVATE_NETWORKS', async () => {
    const loop = webApp({ backchannelLogoutUri: 'https://127.0.0.1:8443/bc' });
    assert.equal((await call(t, w.owner, 'POST', appsUrl, loop)).status, 201);
    const sw = await world(strict);
    const brand = await createBrand(strict, sw.owner, sw.org);
    const strictApps = `${brandUrl(sw.org, brand.slug)}/apps`;
    expect400(await call(strict, sw.owner, 'POST', strictApps, loop), 'backchannelLogoutUri');
  });

  it("another org's app is 404; a member without org.apps.edit is 403", async () => {
    const created = await call(t, w.owner, 'POST', appsUrl, webApp());
    const url = `${appsUrl}/${created.body.clientId}`;
    expect404(await call(t, w.otherOwner, 'PATCH', url, { postLogoutRedirectUris: [] }));
    const viewer = await memberWith(t, w.org, ['org.apps.view']);
    const res = await call(t, viewer, 'PATCH', url, { backchannelLogoutUri: 'https://app.example/bc' });
    assert.equal(res.status, 403, res.raw);
  });
});
