import { createHmac, randomBytes } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request } from 'node:https';
import { type Socket as NetSocket, Socket, type TcpNetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, rootCertificates } from 'node:tls';
import ipaddr from 'ipaddr.js';
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

/** Instance metadata services outside the link-local ranges (Alibaba, Oracle, Azure's WireServer). */
const METADATA_V4 = new Set(['100.100.100.200', '192.0.0.192', '168.63.129.16']);
/** IPv6 metadata services: AWS's (and EKS Pod Identity's), Google Cloud's, Scaleway's. */
const METADATA_V6 = new Set(['fd00:ec2::254', 'fd00:ec2::23', 'fd20:ce::254', 'fd00:42::42']);

/**
 * Whether a delivery must never connect to `address`, even under WEBHOOK_ALLOW_PRIVATE_NETWORKS:
 * link-local addresses (where every cloud serves instance metadata and credentials: 169.254.169.254,
 * ECS's 169.254.170.2, fe80::/10) and the metadata services elsewhere, also when written as an
 * IPv4-mapped or NAT64 IPv6 address. The flag opens the operator's own networks to webhooks and
 * back-channel logout; it must not let an org admin read cloud credentials from a delivery's
 * response excerpt.
 */
export function metadataAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.process(address); // ::ffff:a.b.c.d is a.b.c.d
  if (ip.kind() === 'ipv6' && ip.range() === 'rfc6052') {
    // 64:ff9b::/96 reaches the IPv4 address in its last 32 bits through a NAT64 gateway.
    const bytes = ip.toByteArray();
    ip = ipaddr.fromByteArray(bytes.slice(12));
  }
  if (ip.range() === 'linkLocal') return true;
  return ip.kind() === 'ipv4' ? METADATA_V4.has(ip.toString()) : METADATA_V6.has(ip.toString());
}

type LookupFn = NonNullable<TcpNetConnectOpts['lookup']>;

/**
 * `request-filtering-agent` with one more refusal that its `allowPrivateIPAddress` cannot express:
 * `refused` addresses, checked on the URL's host and on every address DNS answers, before connecting.
 */
class DeliveryAgent extends RequestFilteringHttpsAgent {
  constructor(
    options: ConstructorParameters<typeof RequestFilteringHttpsAgent>[0],
    private readonly refused: (address: string) => boolean,
  ) {
    super(options);
  }

  override createConnection(
    options: TcpNetConnectOpts,
    listener?: (error: Error | null, socket: Duplex) => void,
  ): Duplex | NetSocket {
    if (options.host && this.refused(options.host)) {
      const error = new Error(`${options.host} is not allowed: a metadata address`);
      const socket = new Socket();
      if (listener) listener(error, socket);
      else socket.destroy(error);
      return socket;
    }
    return super.createConnection({ ...options, lookup: this.refusingLookup(options.lookup) }, listener);
  }

  private refusingLookup(inner: LookupFn = dnsLookup as LookupFn): LookupFn {
    const refused = this.refused;
    return ((hostname: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
      inner(
        hostname,
        opts as never,
        ((err: Error | null, address: string | LookupAddress[], family?: number) => {
          if (err) return cb(err);
          const all = Array.isArray(address) ? address : [{ address, family }];
          const bad = all.find((a) => refused(String(a.address)));
          if (bad) return cb(new Error(`${hostname} resolves to ${bad.address}: a metadata address`));
          cb(null, address, family);
        }) as never,
      );
    }) as LookupFn;
  }
}

export interface DeliveryClientOptions {
  /**
   * Allow loopback, private, CGNAT and unique-local targets (WEBHOOK_ALLOW_PRIVATE_NETWORKS);
   * link-local and metadata addresses stay refused (`refuseAlways`).
   */
  allowPrivateNetworks: boolean;
  /** Addresses refused whatever `allowPrivateNetworks` says (default: `metadataAddress`). */
  refuseAlways?: (address: string) => boolean;
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
 * after DNS resolution, so a name that resolves to a private address is refused too, and metadata
 * addresses are refused even when private networks are allowed; a refusal is a network failure.
 * Redirects are not followed: a 3xx is a `failed_status`.
 */
export class DeliveryClient {
  readonly timeoutMs: number;
  private readonly agent: DeliveryAgent;

  constructor(opts: DeliveryClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? defaults.webhookTimeout * 1000;
    const sockets = opts.maxSocketsPerHost ?? 64;
    this.agent = new DeliveryAgent(
      {
        keepAlive: true,
        maxSockets: sockets,
        // Keep every socket of a busy receiver: a new one costs a TLS handshake.
        maxFreeSockets: sockets,
        // One context for every connection (the CA bundle is parsed once, not per handshake).
        secureContext: createSecureContext(opts.ca ? { ca: [...rootCertificates, ...[opts.ca].flat()] } : {}),
        allowPrivateIPAddress: opts.allowPrivateNetworks,
        allowMetaIPAddress: false,
      },
      opts.refuseAlways ?? metadataAddress,
    );
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
