import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestApp, TestUser } from '../helpers/app.js';
import type { TestOrg } from '../helpers/fixtures.js';
import { recordMutation } from '../../src/events/outbox.js';
import type { EventType } from '../../src/events/catalog.js';

let cached: { key: string; cert: string } | undefined;

/** A throwaway self-signed certificate for 127.0.0.1, ::1 and localhost (made with openssl). */
export function selfSignedCert(): { key: string; cert: string } {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'gh-webhooks-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    cached = {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Received {
  headers: IncomingHttpHeaders;
  /** The raw body bytes, as signed. */
  raw: Buffer;
  path: string;
  at: number;
}

export interface Reply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (slow receiver). */
  delayMs?: number;
}

/** A local HTTPS webhook receiver that records every request and answers as `reply` says. */
export class Receiver {
  readonly received: Received[] = [];
  reply: (r: Received) => Reply = () => ({ status: 200, body: 'ok' });
  private server!: Server;
  port = 0;

  static async start(host = '127.0.0.1'): Promise<Receiver> {
    const r = new Receiver();
    const { key, cert } = selfSignedCert();
    r.server = createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec: Received = {
          headers: req.headers,
          raw: Buffer.concat(chunks),
          path: req.url ?? '/',
          at: Date.now(),
        };
        r.received.push(rec);
        const out = r.reply(rec);
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(out.status ?? 200, out.headers ?? {});
          res.end(out.body ?? '');
        };
        if (out.delayMs) setTimeout(send, out.delayMs).unref();
        else send();
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, host, resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path = '/hook', host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${path}`;
  }

  /** Requests received on one path. */
  on(path: string): Received[] {
    return this.received.filter((x) => x.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Fires a catalog event through the one mutation path, as a module's service would. */
export async function fireEvent(
  t: TestApp,
  org: TestOrg,
  actor: TestUser | null,
  type: EventType,
  data: Record<string, unknown>,
): Promise<void> {
  await t.ctx.db.transaction().execute(async (trx) => {
    await recordMutation(trx, t.clock, {
      orgId: org.id,
      actorUserId: actor?.id ?? null,
      action: `test.${type}`,
      resourceType: 'test',
      resourceId: 'test',
      events: [{ type, data }],
    });
  });
}
