import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { defaults } from '../../config/defaults.js';
import type { DeliveryStatus } from './webhooks.queries.js';

export const SECRET_PREFIX = 'whsec_';
export const USER_AGENT = 'Service-Webhooks/1.0';

/** `whsec_` + base64 of 32 random bytes (DESIGN.md §4). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of both signatures: the 32 bytes the secret encodes. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The headers of one attempt. `Service-Signature` is hex HMAC-SHA256 of the raw body; the Standard
 * Webhooks `webhook-signature` is base64 HMAC-SHA256 of `id.timestamp.body`, so stock verifiers work.
 */
export function signedHeaders(
  a: { id: string; event: string; body: string; secret: string },
  timestampSec: number,
): Record<string, string> {
  const key = secretKey(a.secret);
  const ts = String(timestampSec);
  const hex = createHmac('sha256', key).update(a.body).digest('hex');
  const std = createHmac('sha256', key).update(`${a.id}.${ts}.${a.body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'service-signature': hex,
    'service-event': a.event,
    'service-delivery': a.id,
    'service-timestamp': ts,
    'webhook-id': a.id,
    'webhook-timestamp': ts,
    'webhook-signature': `v1,${std}`,
  };
}

export interface AttemptResult {
  status: Exclude<DeliveryStatus, 'pending'>;
  responseCode: number | null;
  responseBodyExcerpt: string | null;
}

export interface DeliveryClientOptions {
  /** Allow loopback, private, link-local and CGNAT targets (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  /** Response deadline in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Extra trusted CA certificates (tests and benchmarks use a self-signed receiver). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Sockets kept per receiver host. */
  maxSocketsPerHost?: number;
}

/** Bytes of a response body read at most; the log keeps only the first 200 characters. */
const MAX_BODY_READ = 4096;

/**
 * Sends one attempt. The address is checked by `request-filtering-agent` when the socket connects,
 * after DNS resolution, so a name that resolves to a private address is refused too; a refusal is a
 * network failure. Redirects are not followed: a 3xx is a `failed_status`.
 */
export class DeliveryClient {
  readonly timeoutMs: number;
  private readonly agent: RequestFilteringHttpsAgent;

  constructor(opts: DeliveryClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? defaults.webhookTimeout * 1000;
    const sockets = opts.maxSocketsPerHost ?? 64;
    this.agent = new RequestFilteringHttpsAgent({
      keepAlive: true,
      maxSockets: sockets,
      // Keep every socket of a busy receiver: a new one costs a TLS handshake.
      maxFreeSockets: sockets,
      // One context for every connection (the CA bundle is parsed once, not per handshake).
      secureContext: createSecureContext(opts.ca ? { ca: [...rootCertificates, ...[opts.ca].flat()] } : {}),
      allowPrivateIPAddress: opts.allowPrivateNetworks,
      allowMetaIPAddress: false,
    });
  }

  send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    return new Promise<AttemptResult>((resolve) => {
      let done = false;
      const finish = (r: AttemptResult) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(r);
      };
      let req: ReturnType<typeof request>;
      try {
        req = request(new URL(url), {
          method: 'POST',
          agent: this.agent,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body, 'utf8')) },
        });
      } catch {
        finish({ status: 'failed_network', responseCode: null, responseBodyExcerpt: null });
        return;
      }
      const timer = setTimeout(() => {
        finish({ status: 'failed_timeout', responseCode: null, responseBodyExcerpt: null });
        req.destroy();
      }, this.timeoutMs);
      req.on('error', () =>
        finish({ status: 'failed_network', responseCode: null, responseBodyExcerpt: null }),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const code = res.statusCode ?? 0;
        const complete = () => {
          const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, defaults.webhookResponseExcerpt);
          finish({
            status: code >= 200 && code < 300 ? 'succeeded' : 'failed_status',
            responseCode: code,
            responseBodyExcerpt: excerpt,
          });
        };
        res.on('data', (c: Buffer) => {
          if (size < MAX_BODY_READ) chunks.push(c);
          size += c.length;
          if (size >= MAX_BODY_READ) {
            // Enough for the excerpt; do not let a receiver stream into our memory.
            complete();
            res.destroy();
          }
        });
        res.on('end', complete);
        res.on('error', () =>
          finish({ status: 'failed_network', responseCode: code || null, responseBodyExcerpt: null }),
        );
      });
      // A string body goes out in one write with the headers.
      req.end(body, 'utf8');
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
