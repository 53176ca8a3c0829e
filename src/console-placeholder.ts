import type { FastifyPluginAsync } from 'fastify';
import { CONSOLE_CLIENT_ID } from './bootstrap.js';
import { esc, sendPage } from './oidc/pages/html.js';

/**
 * `/console` and `/console/callback` until the console (a browser app) replaces this file: a page
 * that says where a console token comes from, never a JSON 404. Hosted pages, not in the OpenAPI
 * document.
 */
export const consolePlaceholderRoutes: FastifyPluginAsync = async (app) => {
  const base = app.ctx.config.baseUrl;
  const redirectUri = `${base}/console/callback`;
  const steps = `<ol>
<li>Make a PKCE pair: a random <code>code_verifier</code> and its <code>code_challenge</code> (base64url SHA-256).</li>
<li>Send the browser to <code>/oauth2/authorize</code> with <code>response_type=code</code>, <code>client_id=${esc(CONSOLE_CLIENT_ID)}</code>, <code>redirect_uri=${esc(redirectUri)}</code>, <code>scope=openid profile</code>, <code>code_challenge</code>, <code>code_challenge_method=S256</code> and a <code>state</code>, and sign in.</li>
<li>You come back to <code>/console/callback?code=…</code>. Post <code>grant_type=authorization_code</code>, <code>code</code>, <code>redirect_uri</code>, <code>client_id=${esc(CONSOLE_CLIENT_ID)}</code> and <code>code_verifier</code> as a form to <code>/oauth2/token</code>.</li>
<li>Its <code>access_token</code> is the console token: send it as <code>Authorization: Bearer …</code> to the REST API.</li>
</ol>`;
  const links = `<p>The API reference: <a href="/docs">/docs</a> (the OpenAPI document: <a href="/openapi.json">/openapi.json</a>). The repository's <code>docs/getting-started.md</code> walks through it.</p>`;
  const hidden = { schema: { hide: true } };

  app.get('/console', hidden, (_req, reply) =>
    sendPage(reply, {
      title: 'Gatehouse console',
      body: `<header><h1>Gatehouse console</h1><p class="sub">The console app is not part of this build yet.</p></header>
<p>To call the API as yourself you need a console token: an access token of the <code>${esc(CONSOLE_CLIENT_ID)}</code> app.</p>
${steps}
${links}`,
    }),
  );

  app.get('/console/callback', hidden, (req, reply) => {
    const query = req.query as Record<string, unknown>;
    const failed = typeof query.error === 'string';
    return sendPage(reply, {
      title: failed ? 'Sign-in did not complete' : 'Signed in: exchange the code',
      status: 200,
      body: failed
        ? `<header><h1>Sign-in did not complete</h1></header>
<p class="error" id="error-code">${esc(query.error)}</p>
<p><a href="/console">Start again</a></p>`
        : `<header><h1>Signed in: exchange the code</h1><p class="sub">The console app is not part of this build yet.</p></header>
<p>The authorization code is in this page's address (<code>code=</code>). It works once, within minutes, and only with your <code>code_verifier</code>.</p>
${steps}
${links}`,
    });
  });
};
