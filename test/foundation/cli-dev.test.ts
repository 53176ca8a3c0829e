import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import bs58 from 'bs58';
import { decodeJwt } from 'jose';
import { pkce } from '../helpers/signin.js';
import { GATEHOUSE_BIN, type RunningServer, startServer } from '../helpers/server.js';

const exec = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function gatehouse(args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [GATEHOUSE_BIN, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** `gatehouse dev`: a development wallet in DATA_DIR signed in through the running server's real flow. */
describe('gatehouse dev against a running server', () => {
  let srv: RunningServer;
  const api = async (path: string, token: string, init: RequestInit = {}) => {
    const res = await fetch(`${srv.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };

  before(async () => {
    srv = await startServer();
  });
  after(() => srv.stop());

  it('dev token creates a 0600 keypair file on first use and prints a console token for its wallet', async () => {
    const walletFile = join(srv.dataDir, 'dev-wallet.json');
    assert.equal(existsSync(walletFile), false);
    const first = await gatehouse(['dev', 'token'], srv.env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(statSync(walletFile).mode & 0o777, 0o600);
    const keypair = JSON.parse(readFileSync(walletFile, 'utf8')) as number[];
    assert.equal(keypair.length, 64);
    const address = bs58.encode(Buffer.from(keypair.slice(32)));
    assert.match(first.stderr, new RegExp(`created development wallet ${address}`));

    const token = first.stdout.trim();
    const claims = decodeJwt(token);
    assert.equal(claims.iss, srv.url);
    assert.equal(claims.aud, 'console');
    assert.equal(claims.client_id, 'console');
    const me = await api('/users/me', token);
    assert.equal(me.status, 200);
    assert.equal(me.body.id, claims.sub);
    assert.deepEqual(
      me.body.userPublicKeys.map((k: { address: string; isPrimary: boolean }) => [k.address, k.isPrimary]),
      [[address, true]],
    );
    // A real sign-in, recorded as one: the token was not minted behind the server's back.
    const activity = await api('/users/me/activity', token);
    assert.equal(activity.body.items[0].type, 'sign_in');

    const second = await gatehouse(['dev', 'token'], srv.env);
    assert.equal(second.code, 0, second.stderr);
    assert.doesNotMatch(second.stderr, /created development wallet/);
    assert.equal(decodeJwt(second.stdout.trim()).sub, claims.sub, 'the same wallet signs in again');
    assert.notEqual(second.stdout.trim(), token);
  });

  it('dev token --json prints the token response, with a refresh token for offline_access', async () => {
    const out = await gatehouse(
      ['dev', 'token', '--json', '--scope', 'openid profile offline_access'],
      srv.env,
    );
    assert.equal(out.code, 0, out.stderr);
    const tokens = JSON.parse(out.stdout);
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(typeof tokens.refresh_token, 'string');
    assert.equal(typeof tokens.id_token, 'string');
  });

  it('dev signin drives an app authorization request to the code, and --deny to access_denied', async () => {
    const token = (await gatehouse(['dev', 'token'], srv.env)).stdout.trim();
    assert.equal(
      (
        await api('/identity/organizations', token, {
          method: 'POST',
          body: '{"name":"Dev","slug":"dev-org"}',
        })
      ).status,
      201,
    );
    const brand = await api('/identity/organizations/dev-org/brands', token, {
      method: 'POST',
      body: JSON.stringify({ slug: 'dev-shop', name: 'Dev Shop' }),
    });
    assert.equal(brand.status, 201);
    const app = await api('/identity/organizations/dev-org/brands/dev-shop/apps', token, {
      method: 'POST',
      body: JSON.stringify({
        name: 'Dev web',
        type: 'web',
        redirectUris: ['https://shop.example.com/callback'],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile'],
      }),
    });
    assert.equal(app.status, 201);
    const authorize = (state: string) =>
      `${srv.url}/oauth2/authorize?${new URLSearchParams({
        client_id: app.body.clientId,
        redirect_uri: 'https://shop.example.com/callback',
        response_type: 'code',
        scope: 'openid profile',
        state,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      })}`;

    const ok = await gatehouse(['dev', 'signin', authorize('s-allow'), '--wallet', 'alice'], srv.env);
    assert.equal(ok.code, 0, ok.stderr);
    const back = new URL(ok.stdout.trim());
    assert.equal(`${back.origin}${back.pathname}`, 'https://shop.example.com/callback');
    assert.equal(back.searchParams.get('state'), 's-allow');
    assert.equal(back.searchParams.get('iss'), srv.url);
    assert.match(back.searchParams.get('code') ?? '', /.{20,}/);
    assert.match(ok.stderr, /consent: allow/);
    assert.equal(statSync(join(srv.dataDir, 'dev-wallet-alice.json')).mode & 0o777, 0o600);

    const denied = await gatehouse(
      ['dev', 'signin', authorize('s-deny'), '--wallet', 'bob', '--deny'],
      srv.env,
    );
    assert.equal(denied.code, 0, denied.stderr);
    const refused = new URL(denied.stdout.trim());
    assert.equal(refused.searchParams.get('error'), 'access_denied');
    assert.equal(refused.searchParams.get('code'), null);
  });

  it('dev wallet prints the address, and a wallet file others can read is refused', async () => {
    const out = await gatehouse(['dev', 'wallet', '--wallet', 'carol'], srv.env);
    assert.equal(out.code, 0, out.stderr);
    const file = join(srv.dataDir, 'dev-wallet-carol.json');
    const keypair = JSON.parse(readFileSync(file, 'utf8')) as number[];
    assert.equal(out.stdout.trim(), bs58.encode(Buffer.from(keypair.slice(32))));
    chmodSync(file, 0o644);
    const refused = await gatehouse(['dev', 'token', '--wallet', 'carol'], srv.env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /others can read it \(mode 644\)/);
    assert.equal(refused.stdout, '');
  });

  it('an unreachable server is one line of error, exit 1', async () => {
    const out = await gatehouse(['dev', 'token'], { ...srv.env, PORT: '1', BASE_URL: 'http://127.0.0.1:1' });
    assert.equal(out.code, 1);
    assert.match(out.stderr, /cannot read http:\/\/127\.0\.0\.1:1\/\.well-known\/openid-configuration/);
    assert.doesNotMatch(out.stderr, /\n\s+at /, 'no stack trace');
  });
});

describe('gatehouse dev in production', () => {
  it('is refused with exit 2 before any wallet is created or any request is made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-dev-prod-'));
    try {
      for (const args of [
        ['dev', 'token'],
        ['dev', 'wallet'],
        ['dev', 'signin', 'http://127.0.0.1:1/oauth2/authorize'],
      ]) {
        const out = await gatehouse(args, {
          ...process.env,
          NODE_ENV: 'production',
          DATA_DIR: dir,
          ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
          BASE_URL: 'http://127.0.0.1:1',
        });
        assert.equal(out.code, 2, args.join(' '));
        assert.match(out.stderr, /refused when NODE_ENV=production/);
        assert.equal(out.stdout, '');
      }
      assert.equal(existsSync(join(dir, 'dev-wallet.json')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
