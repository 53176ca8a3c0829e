import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { Metrics } from '../../src/ops/metrics.js';

const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};
const dockerfile = read('Dockerfile');
/** Instructions of the Dockerfile, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), args: rest.join(' ') };
  });
const all = (op: string) => instructions.filter((i) => i.op === op).map((i) => i.args);
/** ENV of the final stage, `ENV A=1 B=2` form. */
function finalEnv(): Record<string, string> {
  const lastFrom = instructions.map((i) => i.op).lastIndexOf('FROM');
  const env: Record<string, string> = {};
  for (const i of instructions.slice(lastFrom))
    if (i.op === 'ENV') for (const m of i.args.matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  return env;
}

describe('Dockerfile', () => {
  it('is multi-stage on node:<major>-slim with the major that package.json engines allows', () => {
    const froms = all('FROM');
    assert.ok(froms.length >= 2, 'multi-stage');
    const engineMajor = Number(/(\d+)/.exec(pkg.engines.node)?.[1]);
    for (const f of froms) {
      const m = /^node:(\d+)-slim\b/.exec(f);
      assert.ok(m, `${f} is node:<major>-slim`);
      assert.equal(Number(m[1]), engineMajor, `${f} matches engines ${pkg.engines.node}`);
    }
  });

  it('starts the command npm start runs, with node as PID 1 (exec form, no npm, no shell)', () => {
    const cmd = all('CMD').at(-1) ?? '';
    const argv = JSON.parse(cmd) as string[];
    // `npm start` builds the console first when it is stale; the image built it in its first stage.
    const start = pkg.scripts.start
      .replace(/^node scripts\/build-console\.mjs && /, '')
      .replace(/^exec\s+/, '')
      .split(/\s+/);
    assert.deepEqual(argv, start);
    assert.equal(argv[0], 'node');
    assert.equal(all('ENTRYPOINT').length, 0);
  });

  it('builds the console in a stage with dev dependencies and copies only the bundle into the image', () => {
    const runs = all('RUN');
    assert.ok(
      runs.some((r) => /npm ci\b/.test(r) && !/--omit=dev/.test(r) && /console\/dist\/index\.html/.test(r)),
      'a stage runs the full npm ci (prepare builds the console) and checks the bundle',
    );
    assert.ok(
      runs.some((r) => /npm ci\b.*--omit=dev/.test(r) && /--ignore-scripts/.test(r)),
      'production dependencies are installed without prepare (it needs the dev dependencies)',
    );
    assert.ok(all('COPY').some((c) => /--from=console\b.*console\/dist/.test(c)));
    assert.ok(
      all('COPY').some((c) => c.includes('clients/typescript/package.json')),
      'the workspace npm ci needs',
    );
  });

  it('exposes the default public port and the metrics port it sets, and they differ', () => {
    const env = finalEnv();
    const defaults = loadConfig({
      ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
      DATA_DIR: '/nonexistent',
    });
    const exposed = all('EXPOSE')
      .flatMap((a) => a.split(/\s+/))
      .map(Number);
    assert.equal(Number(env.PORT ?? defaults.port), defaults.port, 'PORT is the config default');
    const container = loadConfig({ ...env, ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') });
    assert.equal(container.metricsPort, 9464);
    assert.deepEqual(exposed.sort(), [defaults.port, 9464].sort());
    assert.equal(container.nodeEnv, 'production');
  });

  it('runs as a non-root user and checks /readyz', () => {
    const user = all('USER').at(-1);
    assert.ok(user && user !== 'root' && user !== '0', `USER ${user}`);
    const health = all('HEALTHCHECK').join(' ');
    assert.match(health, /\/readyz/);
    assert.match(health, /process\.env\.PORT/);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, { image?: string; build?: unknown; environment?: Record<string, string> }>;
  };
  it('has PostgreSQL, Redis, two Gatehouse instances and a load balancer', () => {
    const s = compose.services;
    assert.match(s.postgres.image ?? '', /^postgres:/);
    assert.match(s.redis.image ?? '', /^redis:/);
    assert.match(s.lb.image ?? '', /^nginx:/);
    const instances = Object.entries(s).filter(([, v]) => v.build);
    assert.equal(instances.length, 2);
    for (const [, v] of instances) {
      const env = v.environment ?? {};
      assert.equal(env.METRICS_PORT, '9464');
      assert.match(env.DATABASE_URL, /@postgres:5432\//);
      assert.match(env.REDIS_URL, /^redis:\/\/redis:6379/);
      assert.equal(env.NODE_ENV, 'production');
    }
    const nginx = read('deploy/nginx.conf');
    for (const [name] of instances) assert.match(nginx, new RegExp(`server ${name}:3000`));
  });
});

describe('deploy/grafana-dashboard.json', () => {
  it('plots only metrics Gatehouse exports', async () => {
    const dash = JSON.parse(read('deploy/grafana-dashboard.json')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const m = new Metrics();
    m.collectProcessMetrics();
    const known = new Set((await m.registry.getMetricsAsJSON()).map((x) => x.name));
    const used = dash.panels.flatMap((p) =>
      p.targets.flatMap((t) =>
        [
          ...t.expr.matchAll(
            /\b([a-z_]+(?:_total|_seconds|_bytes|_depth|_connections)(?:_bucket|_count|_sum)?)\{/g,
          ),
        ].map((x) => x[1]),
      ),
    );
    assert.ok(used.length >= 15);
    for (const name of used) {
      const base = name.replace(/_(bucket|count|sum)$/, '');
      assert.ok(known.has(base) || known.has(name), `${name} is not exported`);
    }
  });
});
