import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../src/context.js';
import { ApiError } from '../../src/http/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Client } from '../../src/oidc/clients.js';
import {
  createInteraction,
  type LoadedInteraction,
  verifyWallet,
  walletChallenge,
} from '../../src/oidc/signin/interactions.js';
import { findSession, sessionCookieName } from '../../src/oidc/signin/sessions.js';
import { sweepExpiredSignin } from '../../src/oidc/signin/sweep.js';
import { createTestWallet } from '../helpers/wallet.js';
import { MemorySigninStores } from './signin-memory-stores.js';

// The headless wallet sign-in (DESIGN.md §3 steps 3–4) on the in-memory stores: no database.

const BASE_URL = 'https://id.example.test';
const client: Client = {
  appId: 'app_mem',
  clientId: 'client_mem',
  orgId: 'org_mem',
  orgSlug: 'mem',
  brandId: 'brd_mem',
  brandSlug: 'mem',
  brandName: 'Memory Brand',
  name: 'Memory App',
  type: 'web',
  isConfidential: false,
  firstParty: true,
  redirectUris: ['https://app.example.test/cb'],
  allowedGrantTypes: ['authorization_code'],
  allowedScopes: ['openid'],
  secretHash: null,
};

function harness() {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const stores = new MemorySigninStores(clock);
  const signIns: string[] = [];
  const ctx = {
    config: { baseUrl: BASE_URL, issuer: BASE_URL },
    clock,
    stores: { signin: stores },
    metrics: { signIn: (method: string, outcome: string) => signIns.push(`${method}:${outcome}`) },
  } as unknown as AppContext;
  const cookies: Record<string, string> = {};
  const reply = {
    setCookie: (name: string, value: string) => {
      cookies[name] = value;
      return reply;
    },
  } as unknown as FastifyReply;
  const req = () =>
    ({
      headers: { 'user-agent': 'memory-test' },
      ip: '192.0.2.7',
      cookies: { ...cookies },
    }) as unknown as FastifyRequest;
  return { clock, stores, ctx, cookies, reply, req, signIns };
}

/** A device-flow interaction: it ends on the device page, so no code and no consent store are needed. */
async function openInteraction(h: ReturnType<typeof harness>): Promise<LoadedInteraction> {
  const params = { redirectUri: client.redirectUris[0], scopes: ['openid'] };
  const id = await createInteraction(h.ctx, {
    kind: 'device',
    client,
    params,
    returnTo: '/device?step=done',
  });
  const row = await h.stores.interactions.findLive(id, h.clock.now());
  assert.ok(row, 'the interaction is live');
  return { row, params, client };
}

describe('wallet sign-in on the in-memory sign-in stores', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness();
  });

  it('interaction → challenge → verify → session: a new wallet makes a user signed in to the brand', async () => {
    const loaded = await openInteraction(h);
    const wallet = createTestWallet();
    const challenge = await walletChallenge(h.ctx, loaded, wallet.address);
    assert.match(challenge.message, /^id\.example\.test wants you to sign in with your Solana account:\n/);
    assert.ok(challenge.message.includes(`\n${wallet.address}\n`));
    assert.ok(challenge.message.includes('- brand:mem'));

    const outcome = await verifyWallet(h.ctx, h.req(), h.reply, loaded, wallet.prove(challenge.message));
    assert.deepEqual(outcome, { step: 'done', redirectTo: `${BASE_URL}/device?step=done` });

    const userId = h.stores.wallets.get(wallet.address);
    assert.ok(userId, 'the wallet is the new user’s primary key');
    const session = await findSession(h.ctx, h.req(), client.brandId);
    assert.equal(session?.userId, userId);
    assert.ok(h.cookies[sessionCookieName(client.brandId)], 'the session cookie is set');
    assert.equal(h.stores.interactionRows.get(loaded.row.id)?.user_id, userId);
    assert.ok(h.stores.interactionRows.get(loaded.row.id)?.completed_at, 'the interaction is completed');
    assert.deepEqual(
      h.stores.activity.map((a) => [a.userId, a.type, a.provider, a.ip]),
      [[userId, 'sign_in', 'solana', '192.0.2.7']],
    );
    assert.deepEqual(h.signIns, ['wallet:succeeded']);
  });

  it('a second sign-in with the same wallet reaches the same user and renews the session: same id, new cookie', async () => {
    const wallet = createTestWallet();
    const first = await openInteraction(h);
    const c1 = await walletChallenge(h.ctx, first, wallet.address);
    await verifyWallet(h.ctx, h.req(), h.reply, first, wallet.prove(c1.message));
    const before = await findSession(h.ctx, h.req(), client.brandId);

    const second = await openInteraction(h);
    const c2 = await walletChallenge(h.ctx, second, wallet.address);
    await verifyWallet(h.ctx, h.req(), h.reply, second, wallet.prove(c2.message));
    const after = await findSession(h.ctx, h.req(), client.brandId);

    assert.equal(h.stores.users.size, 1);
    assert.equal(after?.userId, before?.userId);
    assert.equal(after?.id, before?.id, 'the sid apps hold stays');
    assert.notEqual(after?.token, before?.token, 'the cookie is fresh');
    assert.equal(h.stores.sessionRows.size, 1, 'one session of the brand');
  });

  it('a replayed proof is refused with replayed_nonce and recorded against the wallet’s account', async () => {
    const wallet = createTestWallet();
    const loaded = await openInteraction(h);
    const c = await walletChallenge(h.ctx, loaded, wallet.address);
    const proof = wallet.prove(c.message);
    await verifyWallet(h.ctx, h.req(), h.reply, loaded, proof);
    const again = await openInteraction(h);
    await assert.rejects(
      verifyWallet(h.ctx, h.req(), h.reply, again, proof),
      (err) => err instanceof ApiError && err.code === 'replayed_nonce',
    );
    assert.deepEqual(
      h.stores.activity.map((a) => a.type),
      ['sign_in', 'sign_in_failed'],
    );
    assert.deepEqual(h.signIns, ['wallet:succeeded', 'wallet:failed']);
  });

  it('a challenge past its five minutes is stale, burns nothing, and the sweep removes it', async () => {
    const wallet = createTestWallet();
    const loaded = await openInteraction(h);
    const c = await walletChallenge(h.ctx, loaded, wallet.address);
    h.clock.advance(5 * 60 + 1);
    await assert.rejects(
      verifyWallet(h.ctx, h.req(), h.reply, loaded, wallet.prove(c.message)),
      (err) => err instanceof ApiError && err.code === 'stale_challenge',
    );
    assert.equal(h.stores.users.size, 0, 'no account was made');
    assert.equal([...h.stores.challengeRows.values()][0]?.consumed_at, null);
    h.clock.advance(60 * 60);
    const swept = await sweepExpiredSignin(h.ctx);
    assert.deepEqual(swept, { challenges: 1, interactions: 1, sessions: 0 });
  });
});
