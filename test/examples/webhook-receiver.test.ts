import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureCert } from '../../examples/webhook-receiver/cert.mjs';
import { SignatureError, verifyDelivery } from '../../examples/webhook-receiver/receiver.mjs';
import { newWebhookSecret, signedHeaders } from '../../src/modules/webhooks/delivery.js';
import { type RunningServer, startServer } from '../helpers/server.js';
import { runExample } from './run.js';

/** examples/webhook-receiver against a real Gatehouse trusting the receiver's certificate. */
describe('example: webhook receiver (standardwebhooks)', () => {
  let srv: RunningServer;
  let certDir: string;
  before(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'gh-example-cert-'));
    const { certPath } = ensureCert(certDir);
    srv = await startServer({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: certPath });
  });
  after(async () => {
    await srv.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  it('verifies the test delivery and a real event both ways, and refuses a forged one', async () => {
    const { code, stdout, stderr } = await runExample('examples/webhook-receiver/run.mjs', {
      ...srv.env,
      GATEHOUSE_URL: srv.url,
      CERT_DIR: certDir,
    });
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /^receiver listening on https:\/\/127\.0\.0\.1:\d+\/webhooks$/m);
    assert.match(
      stdout,
      /^verified webhook\.test delivery [0-9a-f-]{36} for org wh-[0-9a-f]{8}: \{"test":true\}$/m,
    );
    const gate = /^verified tokenGate\.created delivery [0-9a-f-]{36} for org wh-[0-9a-f]{8}: (.*)$/m.exec(
      stdout,
    );
    assert.ok(gate, stdout);
    assert.equal(JSON.parse(gate[1]).mintAddress, 'So11111111111111111111111111111111111111112');
    assert.match(stdout, /^refused a delivery: Service-Signature does not match the body$/m);
    assert.match(stdout, /^a forged delivery was answered 401$/m);
  });

  it('says how to start Gatehouse when the server does not trust the receiver', async () => {
    const other = mkdtempSync(join(tmpdir(), 'gh-example-cert-'));
    try {
      const { code, stdout } = await runExample('examples/webhook-receiver/run.mjs', {
        ...srv.env,
        GATEHOUSE_URL: srv.url,
        CERT_DIR: other, // a new certificate the server has never seen
      });
      assert.equal(code, 1);
      assert.match(stdout, /the test delivery was pending: start Gatehouse trusting/);
      assert.match(stdout, /WEBHOOK_ALLOW_PRIVATE_NETWORKS=true NODE_EXTRA_CA_CERTS=\S+cert\.pem npm start/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

/** verifyDelivery against the headers Gatehouse's own signer produces. */
describe('example: webhook signature verification', () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({
    id: '6f1c1f9e-3f5c-4c1e-9a53-1d2b6f0e8a11',
    type: 'member.added',
    timestamp: new Date().toISOString(),
    org: 'acme',
    actorUserId: null,
    data: { user: 'usr_1', roles: ['Member'] },
  });
  const now = Date.now();
  const headersFor = (b: string, s = secret, at = now) =>
    signedHeaders(
      { id: JSON.parse(b).id, event: JSON.parse(b).type, body: b, secret: s },
      Math.floor(at / 1000),
    );
  const code = (fn: () => unknown) => {
    try {
      fn();
      return 'accepted';
    } catch (e) {
      assert.ok(e instanceof SignatureError, String(e));
      return e.message;
    }
  };

  it('accepts a delivery as signed, from the raw bytes', () => {
    const event = verifyDelivery(Buffer.from(body), headersFor(body), secret, now) as { type: string };
    assert.equal(event.type, 'member.added');
  });

  it('refuses a changed body, another secret, a stale timestamp and mismatched headers', () => {
    const h = headersFor(body);
    assert.match(
      code(() => verifyDelivery(Buffer.from(body.replace('Member', 'Owner')), h, secret, now)),
      /Service-Signature/,
    );
    assert.match(
      code(() => verifyDelivery(Buffer.from(body), h, newWebhookSecret(), now)),
      /Service-Signature/,
    );
    assert.match(
      code(() => verifyDelivery(Buffer.from(body), h, secret, now + 301_000)),
      /5 minutes/,
    );
    assert.match(
      code(() =>
        verifyDelivery(Buffer.from(body), { ...h, 'webhook-signature': `v1,${'A'.repeat(44)}` }, secret, now),
      ),
      /Standard Webhooks/,
    );
    assert.match(
      code(() => verifyDelivery(Buffer.from(body), { ...h, 'service-event': 'org.deleted' }, secret, now)),
      /headers do not describe/,
    );
  });

  it('accepts either secret during a rotation', () => {
    const next = newWebhookSecret();
    assert.equal(
      code(() => verifyDelivery(Buffer.from(body), headersFor(body, next), [secret, next], now)),
      'accepted',
    );
    assert.equal(
      code(() => verifyDelivery(Buffer.from(body), headersFor(body), [secret, next], now)),
      'accepted',
    );
  });
});
