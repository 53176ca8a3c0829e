import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGatehouseClient, type Schemas } from '@gatehouse/client';
import { CLIENT_DIR, clientFiles } from '../../scripts/client-generate.js';
import { buildTestApp, createUser, type TestApp, type TestUser } from '../helpers/app.js';

describe('clients/typescript', () => {
  let t: TestApp;
  let user: TestUser;
  let baseUrl: string;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t);
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('is what the document generates (run `npm run client:generate` after changing a route)', async () => {
    const served = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body);
    for (const [path, content] of Object.entries(await clientFiles(served))) {
      const committed = readFileSync(join(CLIENT_DIR, path), 'utf8');
      assert.ok(committed === content, `clients/typescript/${path} is stale: run npm run client:generate`);
    }
  });

  it('creates and reads an org over HTTP with typed paths, bodies and answers', async () => {
    const gatehouse = createGatehouseClient({ baseUrl, token: user.token });
    const created = await gatehouse.POST('/identity/organizations', {
      body: { slug: 'client-test', name: 'Client test' },
    });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const org: Schemas['Org'] | undefined = created.data;
    assert.equal(org?.slug, 'client-test');

    const read = await gatehouse.GET('/identity/organizations/{orgSlug}', {
      params: { path: { orgSlug: 'client-test' } },
    });
    assert.equal(read.data?.name, 'Client test');
  });

  it('answers the typed error envelope, and sends the token from a function per request', async () => {
    let asked = 0;
    const gatehouse = createGatehouseClient({
      baseUrl: `${baseUrl}/`,
      token: async () => {
        asked++;
        return user.token;
      },
    });
    const missing = await gatehouse.GET('/identity/organizations/{orgSlug}', {
      params: { path: { orgSlug: 'no-such-org' } },
    });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.error.code, 'not_found');
    assert.equal(asked, 1);

    const anonymous = createGatehouseClient({ baseUrl });
    const refused = await anonymous.GET('/users/me');
    assert.equal(refused.response.status, 401);
    assert.equal(refused.error?.error.code, 'unauthorized');
  });

  it('needs a base URL', () => {
    assert.throws(() => createGatehouseClient({ baseUrl: '' }), /baseUrl is required/);
  });
});
