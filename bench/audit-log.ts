/**
 * Audit-log query latency on a large log: seeds 1,000,000 entries in one org (and 100,000 in a
 * neighbour) on PostgreSQL, then times filtered pages through the full HTTP stack (app.inject:
 * routing, auth, permission check, rate limiter, validation, query, serialisation).
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/audit-log.ts
 * BENCH_ENTRIES (default 1000000), BENCH_REQUESTS per filter (default 500). Works in a fresh schema
 * of that database and drops it at the end. Goal: p99 of a filtered page < 20 ms.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { CONSOLE_CLIENT_ID } from '../src/bootstrap.js';
import { defaults } from '../src/config/defaults.js';
import { loadConfig } from '../src/config/index.js';
import { newId, randomAlphanumeric } from '../src/lib/ids.js';
import { signJwt } from '../src/oidc/jwt.js';
import { closeContext, createContext } from '../src/wiring.js';
import { insertOrg } from '../test/helpers/fixtures.js';
import { pct } from './lib.js';
import { report } from './report.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const ACTIONS = [
  'org.updated',
  'role.created',
  'role.updated',
  'role.deleted',
  'member.added',
  'member.removed',
  'member.role.added',
  'member.role.removed',
  'brand.created',
  'brand.updated',
  'brand.deleted',
  'app.created',
  'app.updated',
  'app.deleted',
  'app.secret.rotated',
  'connection.upserted',
  'scope.created',
  'tokenGate.created',
  'webhook.created',
  'webhook.updated',
];
const RESOURCE_TYPES = ['app', 'brand', 'member', 'role', 'webhook'];
const ACTORS = 500;
const RESOURCES = 20_000;
const SPAN_DAYS = 30;

if (!process.env.DATABASE_URL) {
  console.error('bench/audit-log.ts needs DATABASE_URL (a PostgreSQL database it may create a schema in)');
  process.exit(2);
}

const schema = `bench_audit_${randomAlphanumeric(8).toLowerCase()}`;
const config = loadConfig(
  {
    NODE_ENV: 'test',
    BASE_URL: 'http://gatehouse.bench',
    ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    DATA_DIR: '/nonexistent-gatehouse-bench',
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.DATABASE_URL,
    DATABASE_SCHEMA: schema,
    RATE_LIMIT_MULTIPLIER: '1000000',
    REDIS_PREFIX: `${schema}:`,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  },
  () => {},
);
const ctx = await createContext(config);
const app = await buildApp(ctx, { ownsContext: false });
await app.ready();

try {
  const now = ctx.clock.now();
  const userId = newId('usr_');
  await ctx.db
    .insertInto('users')
    .values({
      id: userId,
      username: 'bench-owner',
      last_seen: now,
      created_at: now,
      updated_at: now,
    } as never)
    .execute();
  const orgs: Array<{ id: string; slug: string }> = [];
  for (const slug of ['bench-org', 'bench-neighbour']) {
    const id = newId('org_');
    const roles = await insertOrg(ctx.db, { id, slug, createdBy: userId, now });
    await ctx.db
      .insertInto('org_members')
      .values({ org_id: id, user_id: userId, joined_at: now, disabled_at: null })
      .execute();
    await ctx.db
      .insertInto('member_roles')
      .values({ org_id: id, user_id: userId, role_id: roles.owner, assigned_at: now })
      .execute();
    orgs.push({ id, slug });
  }

  const seed = async (orgId: string, count: number, prefix: string) => {
    const spanSeconds = SPAN_DAYS * 24 * 3600;
    await sql`
      insert into audit_log (id, org_id, actor_user_id, action, resource_type, resource_id, metadata, "timestamp")
      select
        ${prefix} || lpad(g::text, 16, '0'),
        ${orgId},
        case when g % 50 = 0 then null else 'usr_bench_' || ((g * 7) % ${ACTORS}) end,
        (${sql.val(ACTIONS)}::text[])[1 + (g % ${ACTIONS.length})],
        (${sql.val(RESOURCE_TYPES)}::text[])[1 + ((g / 3) % ${RESOURCE_TYPES.length})],
        'res_' || ((g::bigint * 7919) % ${RESOURCES}),
        case when g % 3 = 0 then jsonb_build_object('n', g, 'note', 'seeded') else null end,
        ${now}::timestamptz - make_interval(secs => (g::float8 * ${spanSeconds} / ${count}))
      from generate_series(1, ${count}) g`.execute(ctx.db);
  };
  let t0 = performance.now();
  await seed(orgs[0].id, ENTRIES, 'log_a');
  await seed(orgs[1].id, Math.round(ENTRIES / 10), 'log_b');
  await sql`vacuum analyze audit_log`.execute(ctx.db);
  console.log(
    `seeded ${ENTRIES.toLocaleString('en')} + ${Math.round(ENTRIES / 10).toLocaleString('en')} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const token = await signJwt(
    ctx.keys,
    ctx.clock,
    {
      iss: config.issuer,
      sub: userId,
      aud: 'console',
      client_id: CONSOLE_CLIENT_ID,
      scope: 'openid',
      jti: newId(),
      auth_time: ctx.clock.nowSec(),
    },
    { ttl: defaults.accessTokenTtl, typ: 'at+jwt' },
  );
  const headers = { authorization: `Bearer ${token}` };
  const base = `/identity/organizations/${orgs[0].slug}/audit-log`;
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
  const rnd = (n: number) => Math.floor(Math.random() * n);
  const iso = (daysAgo: number) => new Date(now.getTime() - daysAgo * 86_400_000).toISOString();

  const scenarios: Array<[string, () => string]> = [
    ['action', () => `action=${pick(ACTIONS)}`],
    ['actorUserId', () => `actorUserId=usr_bench_${rnd(ACTORS)}`],
    [
      'resourceType + resourceId',
      () => `resourceType=${pick(RESOURCE_TYPES)}&resourceId=res_${rnd(RESOURCES)}`,
    ],
    ['action + since (7 days)', () => `action=${pick(ACTIONS)}&since=${iso(7)}`],
    [
      'actorUserId + since/until (1 day)',
      () => `actorUserId=usr_bench_${rnd(ACTORS)}&since=${iso(3)}&until=${iso(2)}`,
    ],
    ['action, page 5 (offset 200)', () => `action=${pick(ACTIONS)}&limit=50&offset=200`],
    ['since (1 day), no other filter', () => `since=${iso(1)}`],
    ['no filter (counts the whole org; reference)', () => ''],
  ];

  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `\n${REQUESTS} requests per filter, sequential, through app.inject; limit 50 unless noted` +
      `\n${cpus().length} CPUs, load average ${load} at the start of the measurements\n`,
  );
  console.log(
    'filter'.padEnd(46) + 'p50 ms'.padStart(9) + 'p95 ms'.padStart(9) + 'p99 ms'.padStart(9) + '   avg total',
  );
  for (const [name, qs] of scenarios) {
    for (let i = 0; i < 20; i++) await app.inject({ url: `${base}?${qs()}`, headers });
    const times: number[] = [];
    let totals = 0;
    for (let i = 0; i < REQUESTS; i++) {
      t0 = performance.now();
      const res = await app.inject({ url: `${base}?${qs()}`, headers });
      times.push(performance.now() - t0);
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body}`);
      totals += (JSON.parse(res.body) as { total: number }).total;
    }
    times.sort((a, b) => a - b);
    report({
      path: `audit log page at ${ENTRIES.toLocaleString('en')}: ${name}`,
      figure: pct(times, 99),
      unit: 'ms p99',
      peer: 'goal',
      peerFigure: 20,
      lowerIsBetter: true,
    });
    console.log(
      name.padEnd(46) +
        pct(times, 50).toFixed(2).padStart(9) +
        pct(times, 95).toFixed(2).padStart(9) +
        pct(times, 99).toFixed(2).padStart(9) +
        `   ${Math.round(totals / REQUESTS).toLocaleString('en')}`,
    );
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end`,
  );
} finally {
  await app.close();
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(ctx.db);
  await closeContext(ctx);
}
