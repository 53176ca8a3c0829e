import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomAlphanumeric } from '../../src/lib/ids.js';
import { freePort, waitForHttp } from '../helpers/net.js';
import { selfSignedCert } from '../webhooks/receiver.js';

/**
 * Chaos tests run real Gatehouse processes (children of the test, on free ports) against one
 * PostgreSQL and one Redis: a fresh schema and key prefix per run. They need DATABASE_URL and
 * REDIS_URL (CI's services); stores the test breaks on purpose are private ones it starts itself.
 */
export const ROOT = new URL('../..', import.meta.url).pathname;
export const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
/** The issuer every instance and the test's own app share (tokens minted by one verify on all). */
export const BASE_URL = 'http://gatehouse.test';

export function storesOrSkip(t: { skip(msg: string): void }): boolean {
  if (process.env.DATABASE_URL && process.env.REDIS_URL) return true;
  t.skip('chaos tests need DATABASE_URL and REDIS_URL');
  return false;
}

/** The shared settings of one run: its own schema and Redis prefix, the receiver's CA trusted. */
export function runEnv(extra: Record<string, string> = {}): Record<string, string> {
  const run = randomAlphanumeric(8).toLowerCase();
  return {
    NODE_ENV: 'production',
    BASE_URL,
    ENCRYPTION_KEY,
    DATA_DIR: '/nonexistent-gatehouse-chaos',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATABASE_SCHEMA: `gh_chaos_${run}`,
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `gh_chaos_${run}:`,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_MULTIPLIER: '1000',
    LOG_LEVEL: 'warn',
    // One process per instance: the tests kill and partition instances, not workers (test/ops/workers.test.ts).
    WORKERS: '1',
    ...extra,
  };
}

/** One Gatehouse process. */
export class Instance {
  output = '';
  private exited: Promise<number | null>;
  constructor(
    readonly name: string,
    readonly port: number,
    readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
    this.exited = new Promise((r) => child.on('exit', (code) => r(code)));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(name: string, env: Record<string, string>): Promise<Instance> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_EXTRA_CA_CERTS: caFile(),
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const i = new Instance(name, port, child);
    try {
      await waitForHttp(`${i.url}/readyz`, 90_000);
    } catch (e) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start: ${(e as Error).message}\n${i.output}`);
    }
    return i;
  }

  /** kill -9: no shutdown, no flush, leases left behind. */
  async crash(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timer);
  }

  fetch(path: string, init?: RequestInit): Promise<Response> {
    return fetch(`${this.url}${path}`, init);
  }
}

let caPath: string | undefined;
/** The self-signed receiver certificate as a file, for NODE_EXTRA_CA_CERTS. */
function caFile(): string {
  if (!caPath) {
    const dir = mkdtempSync(join(tmpdir(), 'gh-chaos-ca-'));
    caPath = join(dir, 'ca.pem');
    writeFileSync(caPath, selfSignedCert().cert);
  }
  return caPath;
}

export interface Delivery {
  id: string;
  event: string;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1 (HTTPS, the self-signed certificate). `decide` answers each request
 * from how many times that delivery id was seen; `answered` keeps the 2xx responses actually sent
 * (a response to a socket the sender already closed does not count).
 */
export class ChaosReceiver {
  readonly seen = new Map<string, number>();
  readonly answered: Delivery[] = [];
  open = 0;
  decide: (attempt: number, path: string) => { status: number; delayMs?: number } = () => ({ status: 200 });
  private server!: Server;
  port = 0;

  static async start(): Promise<ChaosReceiver> {
    const r = new ChaosReceiver();
    const { key, cert } = selfSignedCert();
    r.server = createServer({ key, cert, keepAlive: true }, (req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['service-delivery'] ?? '');
        const attempt = (r.seen.get(id) ?? 0) + 1;
        r.seen.set(id, attempt);
        const out = r.decide(attempt, req.url ?? '/');
        r.open++;
        const send = () => {
          r.open--;
          if (res.destroyed || req.socket.destroyed) return;
          res.writeHead(out.status, { 'content-type': 'text/plain' });
          res.end('ok');
          if (out.status < 300)
            r.answered.push({ id, event: String(req.headers['service-event']), at: Date.now() });
        };
        if (out.delayMs) setTimeout(send, out.delayMs).unref();
        else send();
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** Delivery ids that got a 2xx at least once. */
  delivered(): Set<string> {
    return new Set(this.answered.map((a) => a.id));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A PostgreSQL cluster of the test's own (initdb in a temp dir, trust auth, 127.0.0.1 on a free
 * port), so the test can stop and start it without touching the machine's shared cluster. PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private static asOwner(cmd: string, args: string[]): string {
    const root = process.getuid?.() === 0;
    return execFileSync(root ? 'runuser' : cmd, root ? ['-u', 'postgres', '--', cmd, ...args] : args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  static async start(): Promise<PrivatePostgres> {
    const versions = execFileSync('ls', ['/usr/lib/postgresql'], { encoding: 'utf8' }).trim().split('\n');
    const bin = `/usr/lib/postgresql/${versions.sort((a, b) => Number(b) - Number(a))[0]}/bin`;
    const dir = mkdtempSync(join(tmpdir(), 'gh-chaos-pg-'));
    chmodSync(dir, 0o777);
    mkdirSync(join(dir, 'data'));
    mkdirSync(join(dir, 'run'));
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
    const port = await freePort();
    const pg = new PrivatePostgres(dir, port, bin);
    PrivatePostgres.asOwner(`${bin}/initdb`, [
      '-D',
      join(dir, 'data'),
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
    ]);
    await pg.up();
    return pg;
  }

  async up(): Promise<void> {
    const opts = `-p ${this.port} -k ${join(this.dir, 'run')} -c listen_addresses=127.0.0.1 -c fsync=off`;
    PrivatePostgres.asOwner(`${this.bin}/pg_ctl`, [
      '-D',
      join(this.dir, 'data'),
      '-o',
      opts,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ]);
  }

  /** Stops it (fast: active sessions are ended), as a crash or failover looks to clients. */
  async down(): Promise<void> {
    PrivatePostgres.asOwner(`${this.bin}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    try {
      await this.down();
    } catch {
      /* already stopped */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Redis of the test's own on a free port (no persistence), to flush and stop. */
export class PrivateRedis {
  private child!: ChildProcess;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(port?: number): Promise<PrivateRedis> {
    const r = new PrivateRedis(port ?? (await freePort()));
    await r.up();
    return r;
  }

  async up(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await until(() => this.ping(), 10_000, 'redis to answer');
  }

  private ping(): boolean {
    try {
      return (
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG'
      );
    } catch {
      return false;
    }
  }

  flush(): void {
    execFileSync('redis-cli', ['-p', String(this.port), 'flushall']);
  }

  async down(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}
