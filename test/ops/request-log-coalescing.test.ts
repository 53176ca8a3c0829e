import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../helpers/app.js';

const DISCOVERY = '/.well-known/openid-configuration';

/**
 * The request lines of one event-loop turn go to an asynchronous destination (one with
 * `flushSync`, as pino's SonicBoom) in one write, after the turn; a plain stream gets each at once.
 */
describe('request log lines to an asynchronous destination', () => {
  it('writes the lines of one turn together, after it, and each line whole', async () => {
    const writes: string[] = [];
    const stream = { write: (s: string) => void writes.push(s), flushSync: () => {} };
    const t = await buildTestApp({ env: { LOG_LEVEL: 'info', LOG_REQUESTS: 'all' }, logStream: stream });
    try {
      // Lines of the app's own start-up requests, if any, are out first.
      await new Promise((r) => setImmediate(r));
      const before = writes.length;
      await Promise.all([
        t.app.inject({ url: DISCOVERY }),
        t.app.inject({ url: DISCOVERY }),
        t.app.inject({ url: '/users/me' }),
      ]);
      await new Promise((r) => setImmediate(r));
      const batches = writes.slice(before).filter((w) => w.includes('"msg":"request"'));
      const lines = batches.flatMap((w) => w.split('\n').filter(Boolean)).map((l) => JSON.parse(l));
      assert.deepEqual(lines.map((l) => l.status).sort(), [200, 200, 401]);
      assert.ok(batches.length < 3, `${batches.length} writes for 3 lines`);
      assert.ok(batches.every((w) => w.endsWith('\n')));
    } finally {
      await t.close();
    }
  });

  it('closing the app writes its pending lines and leaves no exit listener behind', async () => {
    const writes: string[] = [];
    const stream = { write: (s: string) => void writes.push(s), flushSync: () => {} };
    const listeners = process.listenerCount('exit');
    const t = await buildTestApp({ env: { LOG_LEVEL: 'info', LOG_REQUESTS: 'all' }, logStream: stream });
    assert.equal(process.listenerCount('exit'), listeners + 1);
    await t.app.inject({ url: DISCOVERY });
    await t.close();
    assert.ok(
      writes.some((w) => w.includes('"msg":"request"')),
      'the pending line was written at close',
    );
    assert.equal(process.listenerCount('exit'), listeners);
  });

  it('a stream without flushSync gets each line in its own write, at once', async () => {
    const writes: string[] = [];
    const t = await buildTestApp({
      env: { LOG_LEVEL: 'info', LOG_REQUESTS: 'all' },
      logStream: { write: (s: string) => void writes.push(s) },
    });
    try {
      const before = writes.length;
      await t.app.inject({ url: DISCOVERY });
      const lines = writes.slice(before).filter((w) => w.includes('"msg":"request"'));
      assert.equal(lines.length, 1);
      assert.equal(JSON.parse(lines[0] as string).status, 200);
    } finally {
      await t.close();
    }
  });
});
