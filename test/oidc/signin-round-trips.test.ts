import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, buildTestApp, cachesServing } from '../helpers/app.js';
import {
  type SeededClient,
  authorizeQuery,
  collectCookies,
  cookieHeader,
  pkce,
  seedClient,
} from '../helpers/signin.js';
import { type Statement, counted, installSqlCounter, sqlCounterHook, tally } from '../helpers/sql-count.js';
import { type TestWallet, createTestWallet } from '../helpers/wallet.js';

/**
 * Issue 23 item 2: the database round trips of one whole wallet sign-in flow, as bench/signin-flow.ts
 * drives it (a first-party app, `openid profile`, a browser without cookies, PKCE): authorize →
 * wallet challenge → wallet verify (the answer carries the code) → token. Every SQL statement the
 * requests send is counted (transaction control included: each is a round trip); the bounds are
 * what the flow takes now, so a change that adds a round trip fails here and has to say why.
 */
let t: TestApp;
let client: SeededClient;

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '1000' }, routes: sqlCounterHook });
  client = await seedClient(t, { firstParty: true, scopes: ['openid', 'profile'] });
  // The per-instance caches (client, user profile) serve from memory only while the invalidation
  // channel is healthy; a read-through would add round trips that are not the flow's.
  await cachesServing(t);
  installSqlCounter(t);
});
after(() => t.close());

/**
 * Reads that refill a per-instance cache on a wall-clock schedule, not per flow: whether the org's
 * webhooks want `token.issued` (refreshed at most once a second). On a loaded machine a flow can
 * take longer than that, so counting them would make the bounds depend on the machine.
 */
const PER_INSTANCE_CACHE = /from "webhooks"/;

type Step = 'authorize' | 'challenge' | 'verify' | 'token';

/** One flow, each step's statements recorded. */
async function flow(wallet: TestWallet): Promise<Record<Step, Statement[]>> {
  const jar: Record<string, string> = {};
  const { verifier, challenge } = pkce();
  const steps = {} as Record<Step, Statement[]>;
  const step = async <T>(name: Step, fn: (headers: Record<string, string>) => Promise<T>): Promise<T> => {
    const { result, statements } = await counted(fn);
    steps[name] = statements.filter((s) => !PER_INSTANCE_CACHE.test(s.sql));
    // Every step writes (an interaction, a challenge, the sign-in, the code's redemption): a step
    // that counted nothing means the counter missed the database, not a free step.
    assert.ok(steps[name].length > 0, `${name}: no statement counted`);
    return result;
  };
  const start = await step('authorize', (headers) =>
    t.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${authorizeQuery(client, {}, challenge)}`,
      headers,
    }),
  );
  collectCookies(start, jar);
  const id = /\/signin\/([A-Za-z0-9]+)$/.exec(String(start.headers.location))?.[1];
  assert.ok(id, `authorize: ${start.statusCode} ${start.headers.location}`);
  const ch = await step('challenge', (headers) =>
    t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/challenge`,
      payload: { address: wallet.address },
      headers: { ...headers, cookie: cookieHeader(jar) },
    }),
  );
  assert.equal(ch.statusCode, 200, ch.body);
  const verify = await step('verify', (headers) =>
    t.app.inject({
      method: 'POST',
      url: `/interactions/${id}/wallet/verify`,
      payload: wallet.prove(ch.json().message),
      headers: { ...headers, cookie: cookieHeader(jar) },
    }),
  );
  assert.equal(verify.statusCode, 200, verify.body);
  assert.equal(verify.json().step, 'done');
  const code = new URL(verify.json().redirectTo).searchParams.get('code');
  assert.ok(code);
  const token = await step('token', (headers) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        code_verifier: verifier,
      }).toString(),
    }),
  );
  assert.equal(token.statusCode, 200, token.body);
  assert.ok(token.json().id_token);
  return steps;
}

/** Prints the per-step table (and each statement with GATEHOUSE_SQL_TRACE=1); returns the totals. */
function report(title: string, steps: Record<Step, Statement[]>) {
  const rows = Object.entries(steps).map(([name, list]) => ({ step: name, ...tally(list) }));
  const total = tally(Object.values(steps).flat());
  console.log(`\n${title}`);
  console.table([...rows, { step: 'total', ...total }]);
  const listing = Object.entries(steps)
    .flatMap(([name, list]) =>
      list.map((s) => `${name.padEnd(9)} ${s.kind.padEnd(5)} ${s.sql.replace(/\s+/g, ' ')}`),
    )
    .join('\n');
  if (process.env.GATEHOUSE_SQL_TRACE) console.log(listing);
  return { total, listing };
}

/**
 * Statements (round trips, BEGIN/COMMIT included) and writes per whole flow: what it takes today
 * (before issue 23 item 2: 23 and 13 for a returning wallet, 25 and 14 for a new one).
 */
const BOUNDS = {
  returning: { statements: 4, writes: 4 },
  created: { statements: 11, writes: 7 },
};

describe('database round trips of one wallet sign-in flow', () => {
  it('a returning wallet (as the bench drives it) stays within its bounds', async () => {
    const wallet = createTestWallet();
    await flow(wallet); // first sign-in: the user and the wallet are made; the client is cached
    const { total, listing } = report('returning wallet, no session cookie', await flow(wallet));
    assert.ok(t.ctx.invalidation.healthy, 'the caches served from memory throughout');
    assert.ok(total.statements <= BOUNDS.returning.statements, `${total.statements} statements:\n${listing}`);
    assert.ok(total.writes <= BOUNDS.returning.writes, `${total.writes} writes:\n${listing}`);
  });

  it('a new wallet (the account is made) stays within its bounds', async () => {
    const { total, listing } = report('new wallet', await flow(createTestWallet()));
    assert.ok(total.statements <= BOUNDS.created.statements, `${total.statements} statements:\n${listing}`);
    assert.ok(total.writes <= BOUNDS.created.writes, `${total.writes} writes:\n${listing}`);
  });
});
