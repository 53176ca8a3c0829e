import { uuid } from '../lib/ids.js';
import { insertDeliveriesAndNotify } from '../modules/webhooks/webhooks.queries.js';
import type { LogoutDeliveryStore } from '../oidc/stores.js';

/**
 * Back-channel logout tokens ride the webhook outbox (`webhook_deliveries`, its queries' owner):
 * rows of kind `backchannel_logout` with the app instead of a webhook and the token's fixed claims
 * as the body, claimed, retried on the webhook schedule and sent under its SSRF rules by the
 * webhook worker, which signs a fresh token for each attempt.
 */
export function logoutDeliveryStore(): LogoutDeliveryStore {
  return {
    async enqueue(tx, rows, now) {
      await insertDeliveriesAndNotify(
        tx,
        rows.map((r) => ({
          id: uuid(),
          kind: 'backchannel_logout' as const,
          app_id: r.appId,
          org_id: r.orgId,
          event: 'backchannel_logout',
          url: r.url,
          body: JSON.stringify(r.claims),
          status: 'pending' as const,
          attempt_count: 0,
          queued_at: now,
          next_attempt_at: now,
        })),
      );
    },
  };
}
