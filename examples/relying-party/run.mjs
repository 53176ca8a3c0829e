// One command: registers an app in a fresh org and brand of your local Gatehouse, starts the web app
// of app.mjs on 127.0.0.1, and signs a test wallet in through it as a browser would (`--serve` keeps
// it running for you to try in a browser instead).
import { createServer } from 'node:net';
import {
  api,
  consoleToken,
  createBrand,
  createOrg,
  GATEHOUSE,
  gatehouseDev,
  say,
} from '../shared/gatehouse.mjs';
import { createRelyingParty } from './app.mjs';

const serve = process.argv.includes('--serve');
const port = Number(process.env.RP_PORT ?? 0) || (await freePort());
const origin = `http://127.0.0.1:${port}`;
const redirectUri = `${origin}/callback`;

const token = await consoleToken();
const org = await createOrg(token, 'rp');
const brand = await createBrand(token, org, 'rp-shop');
const app = await registerApp();
say(`registered ${app.type} app ${app.clientId} in brand ${brand.slug} (org ${org.slug})`);

const { server } = await createRelyingParty({
  issuer: GATEHOUSE,
  clientId: app.clientId,
  clientSecret: app.clientSecret,
  redirectUri,
});
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
say(`relying party listening on ${origin}`);

if (serve) {
  say(`open ${origin}/login in a browser with a Solana wallet extension; Ctrl-C to stop`);
} else {
  try {
    await signInAsBrowser();
  } finally {
    server.close();
  }
}

/**
 * A server-side web app is a confidential `web` app. Local http redirect URIs are for development
 * only; where this Gatehouse accepts only HTTPS for web apps, a `native` (public, PKCE) app may use
 * the loopback address over http (RFC 8252), so the example registers that instead.
 */
async function registerApp() {
  const path = `/identity/organizations/${org.slug}/brands/${brand.slug}/apps`;
  const fields = {
    redirectUris: [redirectUri],
    allowedGrantTypes: ['authorization_code', 'refresh_token'],
    allowedScopes: ['openid', 'profile', 'offline_access'],
  };
  try {
    return await api(token, 'POST', path, { name: 'Example web app', type: 'web', ...fields });
  } catch (e) {
    const redirectRefused = e.body?.error?.details?.fields?.some((f) => f.field.startsWith('redirectUris'));
    if (e.status !== 400 || !redirectRefused) throw e;
    return api(token, 'POST', path, { name: 'Example web app', type: 'native', ...fields });
  }
}

/** What a browser does: follow the app to the issuer, sign in with a wallet, come back with the code. */
async function signInAsBrowser() {
  let cookie = '';
  const visit = async (url, method = 'GET') => {
    const res = await fetch(new URL(url, origin), { method, redirect: 'manual', headers: { cookie } });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0];
    return res;
  };
  const login = await visit('/login');
  const authorizeUrl = login.headers.get('location');
  say(`/login sent the browser to ${new URL(authorizeUrl).pathname}`);
  // The issuer's part: hosted sign-in with a test wallet through the headless API, then consent.
  const callback = await gatehouseDev('signin', authorizeUrl, '--wallet', 'example-user');
  const back = await visit(callback);
  if (back.status !== 302) throw new Error(`callback failed: ${back.status} ${await back.text()}`);
  const me = await (await visit('/me')).json();
  say(`signed in as ${me.sub}; userinfo ${JSON.stringify(me.profile)}; scope "${me.scope}"`);
  const refreshed = await (await visit('/refresh', 'POST')).json();
  say(`refresh: new access token ${refreshed.refreshed}, expires in ${refreshed.expiresIn} s`);
  const out = await (await visit('/logout', 'POST')).json();
  const after = await visit('/refresh', 'POST');
  say(`signed out ${out.signedOut}; refresh afterwards answers ${after.status}`);
}

async function freePort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port: p } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return p;
}
