// One command: a token gate in a fresh org of your local Gatehouse, and this folder's page served
// on its own origin (127.0.0.1:<port>), checking wallets against the gate from the browser.
// MINT (default: USDC) and MIN_HOLDINGS (raw units, default 1) set the gate; Gatehouse reads
// balances from its SOLANA_RPC_URL.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { api, consoleToken, createOrg, GATEHOUSE, say } from '../shared/gatehouse.mjs';

const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/gate.mjs': ['gate.mjs', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};

const token = await consoleToken();
const org = await createOrg(token, 'gate');
const gate = await api(token, 'POST', `/identity/organizations/${org.slug}/token-gates`, {
  name: 'Holders',
  mintAddress: process.env.MINT ?? 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  minHoldings: process.env.MIN_HOLDINGS ?? '1',
});
say(`gate ${gate.id} in org ${org.slug}: at least ${gate.minHoldings} of ${gate.mintAddress}`);

const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/favicon.ico') return res.writeHead(204).end();
  const file = FILES[path];
  if (req.method !== 'GET' || !file) return res.writeHead(404).end();
  res.writeHead(200, {
    'content-type': file[1],
    // The page may talk to Gatehouse and nothing else.
    'content-security-policy': `default-src 'self'; connect-src ${new URL(GATEHOUSE).origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
  });
  res.end(await readFile(new URL(file[0], import.meta.url)));
});
await new Promise((resolve) => server.listen(Number(process.env.PAGE_PORT ?? 0), '127.0.0.1', resolve));
const page = new URL(`http://127.0.0.1:${server.address().port}/`);
page.search = new URLSearchParams({ gatehouse: GATEHOUSE, org: org.slug, gate: gate.id }).toString();
say(`open ${page.href}`);
