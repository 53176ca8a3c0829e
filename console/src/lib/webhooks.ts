export interface EventType {
  type: string;
  description: string;
  /** Whether `*` receives it (false for the high-volume `token.*` events). */
  inWildcard: boolean;
}

/** The picker's state: everything (`*`) or a chosen list, plus the opt-in high-volume events. */
export interface EventChoice {
  all: boolean;
  chosen: Set<string>;
}

/**
 * The `events` a choice subscribes to: `*` stands for every event it covers, so only the events
 * outside it (opted into) are named beside it; otherwise the chosen names, sorted.
 */
export function eventsOf(choice: EventChoice, catalog: EventType[]): string[] {
  const outside = new Set(catalog.filter((e) => !e.inWildcard).map((e) => e.type));
  if (choice.all) return ['*', ...[...choice.chosen].filter((t) => outside.has(t)).sort()];
  return [...choice.chosen].sort();
}

/** The picker's state for an existing subscription. */
export function choiceOf(events: string[]): EventChoice {
  return { all: events.includes('*'), chosen: new Set(events.filter((e) => e !== '*')) };
}

/** Whether a subscription receives `type` (the API's rule: `*` leaves out the high-volume events). */
export function receives(events: string[], type: EventType): boolean {
  return events.includes(type.type) || (events.includes('*') && type.inWildcard);
}

export const STATUS_LABELS: Record<string, string> = {
  succeeded: 'Succeeded',
  pending: 'Pending retry',
  failed_status: 'Failed: error status',
  failed_timeout: 'Failed: timeout',
  failed_network: 'Failed: network',
};

/**
 * A receiver for the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with the `standardwebhooks` package. Gatehouse secrets are `whsec_` and
 * base64 of 32 bytes, the format that package takes as it is.
 */
export function receiverSnippet(): string {
  return `// npm install standardwebhooks express
import express from 'express';
import { Webhook } from 'standardwebhooks';

// The secret shown once by the console: "whsec_" + base64 of 32 bytes. Keep it out of the code.
const wh = new Webhook(process.env.GATEHOUSE_WEBHOOK_SECRET);
const app = express();

// The signature covers the raw body: read it as bytes, verify, then parse.
app.post('/webhooks/gatehouse', express.raw({ type: 'application/json' }), (req, res) => {
  let event;
  try {
    // Checks webhook-signature over "webhook-id.webhook-timestamp.body" and refuses
    // timestamps more than 5 minutes away.
    event = wh.verify(req.body, req.headers);
  } catch {
    return res.status(400).send('bad signature');
  }
  // At-least-once: skip a webhook-id (= event.id) you have already handled.
  console.log(event.type, event.data);
  res.status(204).end();
});

// Serve it over HTTPS (Gatehouse delivers to https URLs only), e.g. behind your TLS proxy.
app.listen(3000);`;
}
