// One command: an HTTPS receiver on 127.0.0.1, a webhook for it in a fresh org of your local
// Gatehouse, a test delivery and a real event (a token gate created), each verified both ways, and
// a forged delivery refused (`--serve` keeps the receiver running and prints what arrives).
// Gatehouse must trust the receiver's certificate and allow loopback: see README.md.
import { request } from 'node:https';
import { api, consoleToken, createOrg, say } from '../shared/gatehouse.mjs';
import { ensureCert } from './cert.mjs';
import { createReceiver } from './receiver.mjs';

const serve = process.argv.includes('--serve');
const { key, cert, certPath } = ensureCert();
let secret = '';
const waiting = new Map(); // event type → resolve
const receiver = createReceiver({
  key,
  cert,
  secrets: () => secret,
  onEvent: (event) => {
    say(`verified ${event.type} delivery ${event.id} for org ${event.org}: ${JSON.stringify(event.data)}`);
    waiting.get(event.type)?.(event);
  },
  onRejected: (e) => say(`refused a delivery: ${e.message}`),
});
await new Promise((resolve) => receiver.listen(Number(process.env.WEBHOOK_PORT ?? 0), '127.0.0.1', resolve));
const url = `https://127.0.0.1:${receiver.address().port}/webhooks`;
say(`receiver listening on ${url}`);

const token = await consoleToken();
const org = await createOrg(token, 'wh');
const hooks = `/identity/organizations/${org.slug}/webhooks`;
const webhook = await api(token, 'POST', hooks, { url, events: ['*'] });
secret = webhook.secret;
say(`webhook ${webhook.id} subscribed to ${webhook.events.join(', ')}`);

const arrived = (type) => new Promise((resolve) => waiting.set(type, resolve));
const testArrived = arrived('webhook.test');
const { delivery } = await api(token, 'POST', `${hooks}/${webhook.id}/test`);
if (delivery.status !== 'succeeded') {
  say(`the test delivery was ${delivery.status}: start Gatehouse trusting ${certPath} with`);
  say(`  WEBHOOK_ALLOW_PRIVATE_NETWORKS=true NODE_EXTRA_CA_CERTS=${certPath} npm start`);
  await api(token, 'DELETE', hooks + `/${webhook.id}`);
  receiver.close();
  process.exit(1);
}
await testArrived;

if (serve) {
  say(
    'waiting for deliveries; change something in the org (a token gate, an app...) to see one; Ctrl-C to stop',
  );
} else {
  try {
    const gateArrived = arrived('tokenGate.created');
    await api(token, 'POST', `/identity/organizations/${org.slug}/token-gates`, {
      name: 'Holders',
      mintAddress: 'So11111111111111111111111111111111111111112',
      minHoldings: '1',
    });
    await withTimeout(gateArrived, 30_000, 'the tokenGate.created delivery');
    const status = await forge(url);
    say(`a forged delivery was answered ${status}`);
  } finally {
    receiver.close();
  }
}

/** A delivery with a made-up signature, as an attacker would send one. */
function forge(target) {
  const body = JSON.stringify({ id: 'evil', type: 'webhook.test', data: {} });
  return new Promise((resolve, reject) => {
    const req = request(target, {
      method: 'POST',
      ca: cert,
      headers: {
        'content-type': 'application/json',
        'service-signature': '00'.repeat(32),
        'service-timestamp': String(Math.floor(Date.now() / 1000)),
      },
    });
    req.on('response', (res) => resolve(res.statusCode));
    req.on('error', reject);
    req.end(body);
  });
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not arrive within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
