/**
 * The baselines: a bare Fastify server answering `{ hello: 'world' }`, or with `discovery` as the
 * second argument, the same discovery document Gatehouse serves (so the bytes on the wire match), or
 * with `body`, the JSON text of BENCH_BARE_BODY (on GET `/` and on the path given as third argument).
 */
import Fastify from 'fastify';
import type { Config } from '../src/config/index.js';
import { discoveryDocument } from '../src/oidc/discovery.js';

const port = Number(process.argv[2] ?? 3999);
const app = Fastify({ logger: false });
if (process.argv[3] === 'discovery') {
  const doc = discoveryDocument({ issuer: process.argv[4] ?? `http://127.0.0.1:${port}` } as Config);
  app.get('/', async () => doc);
} else if (process.argv[3] === 'body') {
  const body = process.env.BENCH_BARE_BODY ?? '{}';
  const send = async (_req: unknown, reply: { type(t: string): { send(b: string): void } }) =>
    reply.type('application/json; charset=utf-8').send(body);
  app.get('/', send);
  if (process.argv[4]) app.get(process.argv[4], send);
} else {
  app.get('/', async () => ({ hello: 'world' }));
}
await app.listen({ port, host: '127.0.0.1' });
