import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { runCommand } from '../examples/run.js';
import { type RunningServer, startServer } from '../helpers/server.js';

const GUIDE = new URL('../../docs/getting-started.md', import.meta.url);

/** The guide's ```sh blocks, in order (```shell blocks are shown only: the server start, a browser). */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/**
 * docs/getting-started.md, run as a reader would: every command of its ```sh blocks, in order, in
 * one shell, against a real server (the guide's localhost:3000 pointed at it).
 */
describe('the getting-started guide', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer();
  });
  after(() => srv.stop());

  it('runs from the first console token to a signed-in user, refreshed and revoked', async () => {
    const blocks = runnableBlocks(readFileSync(GUIDE, 'utf8'));
    assert.ok(blocks.length >= 9, `found only ${blocks.length} runnable blocks`);
    const script = ['set -euo pipefail', ...blocks]
      .join('\n')
      .replaceAll('localhost:3000', `localhost:${srv.port}`);
    assert.doesNotMatch(script, /:3000\b/);
    // A reader's shell, not npm's: under `npm test` or `npx -p node@24` the npm_* variables point an
    // inner `npx gatehouse` at npm's own package context instead of this checkout's bin.
    const env = Object.fromEntries(Object.entries(srv.env).filter(([k]) => !/^npm_/i.test(k)));
    const { code, stdout, stderr } = await runCommand('bash', ['-c', script], env);
    assert.equal(code, 0, `the guide failed:\n${stdout}\n${stderr}`);

    // What a reader sees at each step.
    assert.match(stdout, new RegExp(`"issuer": "http://localhost:${srv.port}"`));
    assert.match(stdout, /"blockchain": "solana"/); // /users/me of the dev wallet's user
    assert.match(stdout, /"slug": "acme"/);
    assert.match(stdout, /"slug": "acme-shop"/);
    assert.match(stdout, /"name": "orders:read"/);
    assert.match(stdout, /"isConfidential": true/);
    assert.match(stdout, /https:\/\/shop\.example\.com\/callback\?code=[^&\s]+&state=af0ifjsldkj&iss=/);
    assert.match(stdout, /"has_refresh_token": true/);
    assert.match(
      stdout,
      /"active": true,\s+"aud": "acme-shop",\s+"scope": "openid profile offline_access orders:read"/,
    );
    assert.match(stdout, /^200$/m); // the revocation
    assert.match(stderr, /created development wallet \S+ in .*dev-wallet-alice\.json/);
    assert.match(stderr, /consent: allow/);
  });
});
