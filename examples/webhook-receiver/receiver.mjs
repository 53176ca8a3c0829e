// Receiving Gatehouse webhooks: both signatures verified over the raw body bytes before parsing,
// deliveries deduplicated on their id, 2xx answered at once.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:https';
import { Webhook } from 'standardwebhooks';

export class SignatureError extends Error {}

/**
 * Checks one delivery and returns its envelope `{ id, type, timestamp, org, actorUserId, data }`.
 * `secret` is the webhook's `whsec_…` value (or a list of them during a rotation).
 * Two independent checks, as a receiver may use either:
 *  - `Service-Signature`: hex HMAC-SHA256 of the raw body, keyed with the bytes the secret encodes,
 *    compared in constant time, and `Service-Timestamp` within 5 minutes;
 *  - the Standard Webhooks headers with the `standardwebhooks` library (it checks the timestamp too).
 */
export function verifyDelivery(rawBody, headers, secret, now = Date.now()) {
  const secrets = [secret].flat();
  const header = (name) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const given = Buffer.from(header('service-signature') ?? '', 'hex');
  const serviceOk = secrets.some((s) => {
    const expected = createHmac('sha256', Buffer.from(s.slice('whsec_'.length), 'base64'))
      .update(rawBody)
      .digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!serviceOk) throw new SignatureError('Service-Signature does not match the body');
  if (Math.abs(now / 1000 - Number(header('service-timestamp'))) > 300)
    throw new SignatureError('Service-Timestamp is more than 5 minutes away');

  let event;
  let lastError;
  for (const s of secrets) {
    try {
      event = new Webhook(s).verify(rawBody, {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      });
      break;
    } catch (e) {
      lastError = e;
    }
  }
  if (!event) throw new SignatureError(`Standard Webhooks signature: ${lastError?.message}`);
  if (event.id !== header('service-delivery') || event.type !== header('service-event'))
    throw new SignatureError('the headers do not describe this body');
  return event;
}

/**
 * An HTTPS receiver at POST /webhooks (Gatehouse delivers only to https URLs). `secrets()` gives the
 * current secret(s); `onEvent` runs after the answer, once per delivery id.
 */
export function createReceiver({ key, cert, secrets, onEvent, onRejected = () => {} }) {
  const seen = new Set(); // use your database: a unique constraint on the delivery id
  return createServer({ key, cert }, (req, res) => {
    if (req.method !== 'POST' || req.url !== '/webhooks') return res.writeHead(404).end();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let event;
      try {
        event = verifyDelivery(raw, req.headers, secrets());
      } catch (e) {
        if (!(e instanceof SignatureError)) throw e;
        onRejected(e);
        return res.writeHead(401).end();
      }
      res.writeHead(204).end(); // answer within 10 s; do the work afterwards
      if (seen.has(event.id)) return; // a retry of a delivery already handled
      seen.add(event.id);
      onEvent(event);
    });
  });
}
