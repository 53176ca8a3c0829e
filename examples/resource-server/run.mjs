// One command: a brand with an `orders:read` scope and an m2m app in a fresh org of your local
// Gatehouse, a client-credentials token for it, and the API of server.mjs on 127.0.0.1 checking
// that token, a token of another audience, a tampered one and none (`--serve` keeps it running).
import { api, consoleToken, createBrand, createOrg, GATEHOUSE, say } from '../shared/gatehouse.mjs';
import { createResourceServer } from './server.mjs';
import { createVerifier } from './verify.mjs';

const serve = process.argv.includes('--serve');
const token = await consoleToken();
const org = await createOrg(token, 'rs');
const brand = await createBrand(token, org, 'rs-api');
const brandPath = `/identity/organizations/${org.slug}/brands/${brand.slug}`;
await api(token, 'POST', `${brandPath}/scopes`, { name: 'orders:read', description: 'See your orders' });
const app = await api(token, 'POST', `${brandPath}/apps`, {
  name: 'Example backend job',
  type: 'm2m',
  redirectUris: [],
  allowedGrantTypes: ['client_credentials'],
  allowedScopes: ['orders:read'],
});
say(`brand ${brand.slug} (the tokens' audience), m2m app ${app.clientId}`);

const tokenRes = await fetch(`${GATEHOUSE}/oauth2/token`, {
  method: 'POST',
  headers: {
    authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded',
  },
  body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'orders:read' }),
});
const { access_token: accessToken } = await tokenRes.json();
if (!accessToken) throw new Error(`client_credentials failed: HTTP ${tokenRes.status}`);

const verify = await createVerifier({
  issuer: GATEHOUSE,
  audience: brand.slug,
  org: org.slug,
  clientIds: [app.clientId],
});
const server = createResourceServer(verify);
await new Promise((resolve) => server.listen(Number(process.env.RS_PORT ?? 0), '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/orders`;
say(`resource server listening on ${url}`);

if (serve) {
  say(`try: curl -H "authorization: Bearer ${accessToken}" ${url}`);
} else {
  const call = async (label, bearer) => {
    const res = await fetch(url, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
    say(`${label}: ${res.status} ${await res.text()}`);
  };
  const [h, p, s] = accessToken.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
  const forged = Buffer.from(JSON.stringify({ ...claims, scope: 'orders:read orders:write' })).toString(
    'base64url',
  );
  try {
    await call('the app token', accessToken);
    await call('no token', undefined);
    await call('a console token (aud console)', token);
    await call('a tampered token', `${h}.${forged}.${s}`);
  } finally {
    server.close();
  }
}
