import { type Static, Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { IsoDate, listOf, Slug } from '../../http/schemas.js';

/** Longest accepted webhook URL. */
export const URL_MAX = 2048;
/** Most event names in one subscription (the catalog has 18, plus `*`). */
export const EVENTS_MAX = 32;

export const OrgParams = Type.Object({ orgSlug: Slug });
export const WebhookParams = Type.Object({ orgSlug: Slug, id: Type.String({ minLength: 1, maxLength: 64 }) });
export const DeliveryParams = Type.Object({
  orgSlug: Slug,
  id: Type.String({ minLength: 1, maxLength: 64 }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64 }),
});

const Url = Type.String({ minLength: 1, maxLength: URL_MAX });
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: EVENTS_MAX,
});

export const CreateWebhookBody = Type.Object({ url: Url, events: Events }, { additionalProperties: false });
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  consecutiveFailures: Type.Integer(),
  lastDeliveredAt: Type.Optional(IsoDate),
  disabledAt: Type.Optional(IsoDate),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
export type WebhookView = Static<typeof Webhook>;

export const WebhookWithSecret = Type.Object({ ...Webhook.properties, secret: Type.String() });

export const SecretResponse = Type.Object({ secret: Type.String() });

export const DELIVERY_STATUSES = [
  'succeeded',
  'failed_timeout',
  'failed_status',
  'failed_network',
  'pending',
] as const;

export const Delivery = Type.Object({
  id: Type.String(),
  event: Type.String(),
  url: Type.String(),
  status: Type.Union([
    Type.Literal('succeeded'),
    Type.Literal('failed_timeout'),
    Type.Literal('failed_status'),
    Type.Literal('failed_network'),
    Type.Literal('pending'),
  ]),
  responseCode: Type.Optional(Type.Integer()),
  responseBodyExcerpt: Type.Optional(Type.String()),
  attemptCount: Type.Integer(),
  queuedAt: IsoDate,
  deliveredAt: Type.Optional(IsoDate),
  nextAttemptAt: Type.Optional(IsoDate),
});
export type DeliveryRecord = Static<typeof Delivery>;

export const TestResponse = Type.Object({ delivery: Delivery });

export const DeliveriesQuery = Type.Object(
  {
    // `failed` (any failure) is accepted besides the five statuses.
    status: Type.Optional(Type.Union([...DELIVERY_STATUSES, 'failed' as const].map((s) => Type.Literal(s)))),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    since: Type.Optional(IsoDate),
    until: Type.Optional(IsoDate),
    limit: Type.Integer({ minimum: 1, maximum: limits.logLimitMax, default: limits.logLimitDefault }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
export type DeliveriesQueryInput = Static<typeof DeliveriesQuery>;

export const WebhookList = listOf(Webhook);
export const DeliveryList = listOf(Delivery);
