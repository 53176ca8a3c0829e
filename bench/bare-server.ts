/** The baseline: a bare Fastify server answering one JSON object. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.argv[2] ?? 3999), host: '127.0.0.1' });
