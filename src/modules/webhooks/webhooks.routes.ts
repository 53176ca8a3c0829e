import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { orgScope } from '../orgs/org-scope.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  Delivery,
  DeliveryList,
  DeliveryParams,
  OrgParams,
  SecretResponse,
  TestResponse,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
  WebhookParams,
  WebhookWithSecret,
} from './webhooks.schemas.js';
import * as service from './webhooks.service.js';
import { WebhookWorker, type WorkerLog } from './worker.js';
import { routeDoc } from '../../http/route-doc.js';

const workers = new WeakMap<AppContext, WebhookWorker>();

/** This instance's delivery worker (tests drive it with `stop()` / `runOnce()`). */
export function webhookWorker(ctx: AppContext, log?: WorkerLog): WebhookWorker {
  let w = workers.get(ctx);
  if (!w) {
    w = new WebhookWorker(ctx, { log });
    workers.set(ctx, w);
  }
  return w;
}

const NoContent = Type.Null();

/** The webhook routes for members (`admin: false`) or for the admin mirror (`admin: true`). */
function scopedRoutes(opts: { admin: boolean }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const ctx = app.ctx;
    const worker = webhookWorker(ctx);
    // The admin mirror spends its own buckets, so operators do not use up an org's budget.
    const { read, write, orgKey } = orgScope(ctx, opts);
    const hookKey = (req: FastifyRequest) => `${orgKey(req)}:${(req.params as { id: string }).id}`;
    const actor = (req: FastifyRequest) => principalOf(req).userId;

    app.post(
      '/',
      {
        schema: {
          ...doc('createWebhook', 'Create a webhook'),
          params: OrgParams,
          body: CreateWebhookBody,
          response: { 201: WebhookWithSecret, ...authErrors, ...errorResponses(409, 422) },
        },
        preHandler: [...write('org.webhooks.edit'), ctx.rateLimits.guard('webhookCreate', orgKey)],
      },
      async (req, reply) =>
        reply.code(201).send(await service.createWebhook(ctx, req.org, actor(req), req.body)),
    );

    app.get(
      '/',
      {
        schema: {
          ...doc('listWebhooks', "List an organization's webhooks"),
          params: OrgParams,
          response: { 200: WebhookList, ...authErrors },
        },
        preHandler: read('org.webhooks.view'),
      },
      async (req) => service.listWebhooks(ctx, req.org.id),
    );

    app.get(
      '/:id',
      {
        schema: {
          ...doc('getWebhook', 'Get a webhook'),
          params: WebhookParams,
          response: { 200: Webhook, ...authErrors },
        },
        preHandler: read('org.webhooks.view'),
      },
      async (req) => service.getWebhook(ctx, req.org.id, req.params.id),
    );

    app.patch(
      '/:id',
      {
        schema: {
          ...doc('updateWebhook', 'Update a webhook'),
          params: WebhookParams,
          body: UpdateWebhookBody,
          response: { 200: Webhook, ...authErrors, ...errorResponses(409) },
        },
        preHandler: write('org.webhooks.edit'),
      },
      async (req) => service.updateWebhook(ctx, req.org.id, actor(req), req.params.id, req.body),
    );

    app.delete(
      '/:id',
      {
        schema: {
          ...doc('deleteWebhook', 'Delete a webhook'),
          params: WebhookParams,
          response: { 204: NoContent, ...authErrors },
        },
        preHandler: write('org.webhooks.edit'),
      },
      async (req, reply) => {
        await service.deleteWebhook(ctx, req.org.id, actor(req), req.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/:id/rotate-secret',
      {
        schema: {
          ...doc('rotateWebhookSecret', "Rotate a webhook's signing secret"),
          params: WebhookParams,
          response: { 200: SecretResponse, ...authErrors },
        },
        preHandler: [...write('org.webhooks.edit'), ctx.rateLimits.guard('webhookRotate', hookKey)],
      },
      async (req) => service.rotateSecret(ctx, req.org.id, actor(req), req.params.id),
    );

    app.post(
      '/:id/test',
      {
        schema: {
          ...doc('testWebhook', 'Send a test event to a webhook'),
          params: WebhookParams,
          response: { 200: TestResponse, ...authErrors },
        },
        preHandler: [...write('org.webhooks.edit'), ctx.rateLimits.guard('webhookTest', hookKey)],
      },
      async (req) => ({
        delivery: await service.testWebhook(ctx, worker, req.org, actor(req), req.params.id),
      }),
    );

    app.get(
      '/:id/deliveries',
      {
        schema: {
          ...doc('listWebhookDeliveries', "List a webhook's deliveries"),
          params: WebhookParams,
          querystring: DeliveriesQuery,
          response: { 200: DeliveryList, ...authErrors },
        },
        preHandler: [...read('org.webhooks.view'), ctx.rateLimits.guard('webhookDeliveriesRead', hookKey)],
      },
      async (req) => service.listDeliveries(ctx, req.org.id, req.params.id, req.query),
    );

    app.post(
      '/:id/deliveries/:deliveryId/replay',
      {
        schema: {
          ...doc('replayWebhookDelivery', 'Send a delivery again'),
          params: DeliveryParams,
          response: { 201: Delivery, ...authErrors },
        },
        preHandler: write('org.webhooks.edit'),
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(
            await service.replayDelivery(ctx, req.org.id, actor(req), req.params.id, req.params.deliveryId),
          ),
    );
  };
}

const doc = routeDoc('Webhooks');

/**
 * Webhooks: subscriptions and the delivery log. The delivery worker is started by src/jobs; the
 * outbox sink (wired in wiring.ts) queues deliveries in each event's transaction.
 */
export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(scopedRoutes({ admin: false }), { prefix: '/identity/organizations/:orgSlug/webhooks' });
  await app.register(scopedRoutes({ admin: true }), {
    prefix: '/admin/identity/organizations/:orgSlug/webhooks',
  });
};
