import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a fast cached reply (sub-millisecond) to a slow upstream call. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The status class label of an HTTP status: `2xx` … `5xx`. */
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

type Observer = { observe(value: number): void };

/**
 * Per-route request metrics, labelled once at route registration: `observe` picks the child of the
 * response's status class from an array, so a request pays the histogram's own update and nothing
 * else (no label object, no string built per request).
 */
export class RouteMetrics {
  private readonly byClass: Array<Observer | undefined> = [];
  constructor(
    private readonly histogram: Histogram<'operation' | 'status_class'>,
    private readonly operation: string,
  ) {}

  observe(statusCode: number, seconds: number): void {
    const i = ((statusCode / 100) | 0) - 1;
    let child = this.byClass[i];
    if (!child) {
      child = this.histogram.labels(this.operation, STATUS_CLASSES[i] ?? 'other');
      this.byClass[i] = child;
    }
    child.observe(seconds);
  }
}

/** What the metrics ask of the running system at scrape time (set by the modules that own it). */
export interface MetricSources {
  /** The webhook queue: pending deliveries and the age (seconds) of the oldest due one. */
  webhookQueue?: () => Promise<{ depth: number; oldestAgeSeconds: number }>;
  /**
   * Token-gate checks answered from the balance cache (hit) or from the chain (miss), counted as
   * plain numbers by the checker: its cached path is the hottest route and pays no label lookup.
   */
  gateChecks?: () => { hit: number; miss: number };
  /** The PostgreSQL pool (absent on the embedded database). */
  pool?: pg.Pool;
}

/**
 * Every Prometheus metric of one Gatehouse instance, on its own registry (test apps in one process
 * never clash). Served by `startMetricsServer` on METRICS_PORT only, never on the public port.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly sources: MetricSources = {};
  private processMetrics = false;
  /** The port `/metrics` is served on, once listening (METRICS_PORT=0 picks a free one). */
  port?: number;

  readonly requestDuration = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP requests by OpenAPI operationId and status class (_count is the request count)',
    labelNames: ['operation', 'status_class'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  readonly tokensIssued = new Counter({
    name: 'gatehouse_tokens_issued_total',
    help: 'Token responses of POST /oauth2/token by grant type and app (client_id)',
    labelNames: ['grant', 'app'] as const,
    registers: [this.registry],
  });

  readonly signIns = new Counter({
    name: 'gatehouse_sign_ins_total',
    help: 'Hosted sign-ins by method (wallet or provider type) and outcome',
    labelNames: ['method', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'gatehouse_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookLatency = new Histogram({
    name: 'gatehouse_webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook request to its response (or failure)',
    labelNames: ['outcome'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [this.registry],
  });

  readonly rpcLatency = new Histogram({
    name: 'gatehouse_solana_rpc_duration_seconds',
    help: 'Solana JSON-RPC balance reads by outcome',
    labelNames: ['outcome'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'gatehouse_rate_limit_refusals_total',
    help: 'Requests refused with 429 by rate limit name',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  constructor() {
    const sources = this.sources;
    new Counter({
      name: 'gatehouse_token_gate_checks_total',
      help: 'Token-gate checks by balance cache result (miss: answered from the Solana RPC)',
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect() {
        const c = sources.gateChecks?.();
        this.reset();
        this.inc({ cache: 'hit' }, c?.hit ?? 0);
        this.inc({ cache: 'miss' }, c?.miss ?? 0);
      },
    });
    new Gauge({
      name: 'gatehouse_webhook_queue_depth',
      help: 'Webhook deliveries waiting for an attempt (due now or retries scheduled)',
      // One database-wide fact each worker reads: a cluster reports it once, not summed.
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        if (sources.webhookQueue) this.set((await sources.webhookQueue()).depth);
      },
    });
    new Gauge({
      name: 'gatehouse_webhook_oldest_pending_age_seconds',
      help: 'How long the oldest due webhook delivery has been waiting',
      // One database-wide fact each worker reads: a cluster reports it once, not summed.
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        if (sources.webhookQueue) this.set((await sources.webhookQueue()).oldestAgeSeconds);
      },
    });
    new Gauge({
      name: 'gatehouse_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting clients)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = sources.pool;
        if (!p) return;
        this.set({ state: 'total' }, p.totalCount);
        this.set({ state: 'idle' }, p.idleCount);
        this.set({ state: 'waiting' }, p.waitingCount);
      },
    });
  }

  /** Request metrics for one route: its operationId, or `METHOD /route/template` without one. */
  route(operation: string): RouteMetrics {
    return new RouteMetrics(this.requestDuration, operation);
  }

  signIn(method: string, outcome: 'succeeded' | 'failed'): void {
    this.signIns.inc({ method, outcome });
  }

  /** Process metrics (CPU, memory, event loop lag, GC); only for an instance that serves them. */
  collectProcessMetrics(): void {
    if (this.processMetrics) return;
    this.processMetrics = true;
    collectDefaultMetrics({ register: this.registry });
  }
}

/** What a metrics listener serves: one process's registry, or a cluster's sum. */
export interface MetricsText {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/**
 * A cluster worker (WORKERS > 1) serves no listener of its own (a shared port would hand each
 * scrape to one worker); it answers the primary's requests for its registry instead.
 */
export function offerToClusterPrimary(metrics: Metrics): void {
  metrics.collectProcessMetrics();
  AggregatorRegistry.setRegistries([metrics.registry]);
  // Constructing one is what makes a worker answer the primary's requests (prom-client's cluster.js).
  new AggregatorRegistry();
}

/** The primary of a cluster: every worker's registry, counters and histograms summed. */
export function clusterMetrics(): MetricsText {
  const aggregator = new AggregatorRegistry();
  return { metrics: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/**
 * Serves `GET /metrics` (Prometheus text format) on its own port, apart from the public listener.
 * Resolves once listening; `close()` stops it.
 */
export async function startMetricsServer(
  source: MetricsText,
  port: number,
  host: string,
  log: { warn(obj: unknown, msg?: string): void },
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    source.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': source.contentType }).end(text);
      },
      (err) => {
        log.warn({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
