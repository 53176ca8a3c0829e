import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { EVENT_DESCRIPTIONS, EVENT_TYPES, subscribes } from '../../events/catalog.js';
import { notFound } from '../../http/errors.js';
import { orgScope } from '../orgs/org-scope.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors } from '../../http/schemas.js';
import { SECRET_PREFIX, signedHeaders } from './delivery.js';
import * as q from './webhooks.queries.js';
import { Delivery, DeliveryParams, OrgParams } from './webhooks.schemas.js';
import { presentDelivery } from './webhooks.service.js';

const doc = routeDoc('Webhooks');

export const EventTypeList = Type.Object({
  items: Type.Array(
    Type.Object({
      type: Type.String(),
      description: Type.String(),
      /** Whether the `*` subscription receives it (false for the high-volume `token.*` events). */
      inWildcard: Type.Boolean(),
    }),
  ),
});

export const DeliveryDetail = Type.Object({
  ...Delivery.properties,
  /** The JSON envelope sent on every attempt. */
  payload: Type.Record(Type.String(), Type.Unknown()),
  /** The request headers that are the same on every attempt. */
  requestHeaders: Type.Record(Type.String(), Type.String()),
  /** Headers computed at each attempt (its timestamp and the signatures over it). */
  attemptHeaders: Type.Array(Type.String()),
  /** The delivery this one replays. */
  replayOf: Type.Optional(Type.String()),
});

/**
 * The headers of a delivery that do not change between attempts, and the names of those that do:
 * two signings with different secrets and times tell them apart, so this follows `signedHeaders`.
 */
export function deliveryHeaders(d: { id: string; event: string; body: string }): {
  requestHeaders: Record<string, string>;
  attemptHeaders: string[];
} {
  const a = signedHeaders({ ...d, secret: `${SECRET_PREFIX}${Buffer.alloc(32, 1).toString('base64')}` }, 1);
  const b = signedHeaders({ ...d, secret: `${SECRET_PREFIX}${Buffer.alloc(32, 2).toString('base64')}` }, 2);
  const requestHeaders: Record<string, string> = {};
  const attemptHeaders: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    if (b[k] === v) requestHeaders[k] = v;
    else attemptHeaders.push(k);
  }
  return { requestHeaders, attemptHeaders };
}

/**
 * What the console needs beside the interface's webhook routes: the event catalog to pick from, and
 * one delivery in full (payload and request headers; the response excerpt is in the record).
 */
export const webhookInspectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx);
  const hookKey = (req: FastifyRequest) => `${req.org.id}:${(req.params as { id: string }).id}`;
  const prefix = '/identity/organizations/:orgSlug/webhooks';

  app.get(
    `${prefix}/event-types`,
    {
      schema: {
        ...doc('listWebhookEventTypes', 'The event catalog a webhook can subscribe to', {
          description:
            '`*` subscribes to every event except those with `inWildcard: false` (`token.issued`, ' +
            '`token.refreshed`), which must be named.',
        }),
        params: OrgParams,
        response: { 200: EventTypeList, ...authErrors },
      },
      preHandler: guard.read('org.webhooks.view'),
    },
    async () => ({
      items: EVENT_TYPES.map((type) => ({
        type,
        description: EVENT_DESCRIPTIONS[type],
        inWildcard: subscribes(['*'], type),
      })),
    }),
  );

  app.get(
    `${prefix}/:id/deliveries/:deliveryId`,
    {
      schema: {
        ...doc('getWebhookDelivery', 'One delivery with its payload and request headers'),
        params: DeliveryParams,
        response: { 200: DeliveryDetail, ...authErrors },
      },
      preHandler: [
        ...guard.read('org.webhooks.view'),
        ctx.rateLimits.guard('webhookDeliveriesRead', hookKey),
      ],
    },
    async (req) => {
      const w = await q.findWebhook(ctx.db, req.org.id, req.params.id);
      if (!w) throw notFound('webhook');
      const d = await q.findDelivery(ctx.db, w.id, req.params.deliveryId);
      if (!d) throw notFound('delivery');
      return {
        ...presentDelivery(d),
        payload: JSON.parse(d.body) as Record<string, unknown>,
        ...deliveryHeaders(d),
        ...(d.replay_of ? { replayOf: d.replay_of } : {}),
      };
    },
  );
};
