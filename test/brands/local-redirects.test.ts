import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redirectUriError } from '../../src/modules/apps/apps.service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { brandUrl, call, createBrand, expect400, type World, world } from './setup.js';

/** DESIGN §3 "API description and console": local development redirect URIs. */

const LOCAL = [
  'http://localhost/callback',
  'http://localhost:5173/callback',
  'http://127.0.0.1/cb',
  'http://127.0.0.1:8080/auth/cb?x=1',
];

const app = (type: string, redirectUris: string[]) => ({
  name: `${type} app`,
  type,
  redirectUris,
  allowedGrantTypes: ['authorization_code'],
  allowedScopes: ['openid'],
});

describe('redirectUriError', () => {
  it('allows local http URIs for every app type only with localDev', () => {
    for (const type of ['web', 'spa', 'native', 'agent'] as const)
      for (const uri of LOCAL) {
        assert.equal(redirectUriError(uri, type, 'f', { localDev: true }), null, `${type} ${uri}`);
        const prod = redirectUriError(uri, type, 'f', { localDev: false });
        // Production keeps HTTPS only; native apps keep RFC 8252's loopback IP literals.
        if (type === 'native' && uri.startsWith('http://127.0.0.1')) assert.equal(prod, null);
        else assert.equal(prod?.code, 'invalid_format', `${type} ${uri}`);
      }
  });
  it('never allows other http hosts, credentials or fragments', () => {
    for (const uri of [
      'http://localhost.evil.example/cb',
      'http://app.example/cb',
      'http://[::1]:3000/cb',
      'http://u:p@localhost/cb',
      'http://localhost/cb#x',
    ])
      assert.ok(redirectUriError(uri, 'web', 'f', { localDev: true }), uri);
  });
});

for (const nodeEnv of ['development', 'production'] as const) {
  describe(`app redirect URIs with NODE_ENV=${nodeEnv}`, () => {
    let t: TestApp;
    let w: World;
    let appsUrl: string;
    before(async () => {
      t = await buildTestApp({ env: { NODE_ENV: nodeEnv, RATE_LIMIT_MULTIPLIER: '100' } });
      w = await world(t);
      const brand = await createBrand(t, w.owner, w.org);
      appsUrl = `${brandUrl(w.org, brand.slug)}/apps`;
    });
    after(() => t.close());

    it(
      nodeEnv === 'production'
        ? 'refuses localhost and 127.0.0.1 over http for web and spa apps'
        : 'accepts localhost and 127.0.0.1 over http for web and spa apps',
      async () => {
        for (const type of ['web', 'spa']) {
          const res = await call(t, w.owner, 'POST', appsUrl, app(type, LOCAL));
          if (nodeEnv === 'production') expect400(res, 'redirectUris.0', 'invalid_format');
          else {
            assert.equal(res.status, 201, res.raw);
            assert.deepEqual(res.body.redirectUris, LOCAL);
          }
        }
      },
    );

    it('a PATCH follows the same rule', async () => {
      const created = await call(t, w.owner, 'POST', appsUrl, app('web', ['https://app.example/cb']));
      assert.equal(created.status, 201, created.raw);
      const res = await call(t, w.owner, 'PATCH', `${appsUrl}/${created.body.clientId}`, {
        redirectUris: ['https://app.example/cb', 'http://localhost:3000/cb'],
      });
      if (nodeEnv === 'production') expect400(res, 'redirectUris.1', 'invalid_format');
      else assert.equal(res.status, 200, res.raw);
    });
  });
}
