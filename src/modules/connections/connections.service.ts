import { createPrivateKey } from 'node:crypto';
import Ajv from 'ajv';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { AppContext } from '../../context.js';
import type { OrgRow } from '../../db/schema.js';
import { recordMutation } from '../../events/outbox.js';
import { fieldErrors } from '../../http/error-handler.js';
import { type FieldError, notFound, validationFailed } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { callbackUrl, enabledTypes, operatorDefaultCredentials } from '../../providers/config.js';
import type { ProviderConfig, ProviderType } from '../../providers/types.js';
import { lockBrand, requireBrand } from '../brands/brands.service.js';
import { liveBrandExists } from '../brands/brands.queries.js';
import { type Connection, PROVIDER_CONFIG_SCHEMAS } from './connections.schemas.js';
import * as q from './connections.queries.js';

type ConnectionOut = Static<typeof Connection>;

export type {
  AppleProviderConfig,
  OAuthProviderConfig,
  ProviderConfig,
  TelegramProviderConfig,
} from '../../providers/types.js';

const ajv = new Ajv.default({ allErrors: true, strict: false, coerceTypes: false, removeAdditional: false });
// Wrapped in `{ config }` so error paths read `config.clientSecret`, like the rest of the body's.
const validators = Object.fromEntries(
  Object.entries(PROVIDER_CONFIG_SCHEMAS).map(([type, schema]) => [
    type,
    ajv.compile(Type.Object({ config: schema })),
  ]),
) as Record<ProviderType, ReturnType<typeof ajv.compile>>;

/** The per-type ProviderConfig rules. Messages name fields and rules, never the values sent. */
export function providerConfigErrors(type: ProviderType, config: object): FieldError[] {
  const validate = validators[type];
  if (!validate({ config })) return fieldErrors((validate.errors ?? []) as never);
  if (type === 'apple' && !isP256PrivateKey(String((config as { privateKey: unknown }).privateKey)))
    return [
      {
        field: 'config.privateKey',
        code: 'invalid_format',
        message: 'must be the PEM of an EC P-256 private key (the .p8 file from Apple)',
      },
    ];
  return [];
}

function isP256PrivateKey(pem: string): boolean {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}

const aadOf = (brandId: string, type: string) => `connection:${brandId}:${type}`;

export { callbackUrl };

function toConnection(
  ctx: AppContext,
  row: q.ConnectionMeta,
  brand: { slug: string; oauth_callback_id: string },
): ConnectionOut {
  return {
    id: row.id,
    brand: brand.slug,
    type: row.type,
    enabled: row.enabled,
    callbackUrl: callbackUrl(ctx, brand.oauth_callback_id, row.type),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function listConnections(ctx: AppContext, org: OrgRow, brandSlug: string) {
  const brand = await requireBrand(ctx.db, org, brandSlug);
  const rows = await q.listConnections(ctx.db, brand.id);
  return { items: rows.map((r) => toConnection(ctx, r, brand)), total: rows.length };
}

/** Creates or replaces the brand's connection of `type`, sealing the config. */
export async function putConnection(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  body: { type: ProviderType; enabled?: boolean; config: object },
): Promise<{ connection: ConnectionOut; created: boolean }> {
  const errors = providerConfigErrors(body.type, body.config);
  if (errors.length) throw validationFailed(errors);
  const enabled = body.enabled ?? true;
  return ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const row = await q.upsertConnection(
      trx,
      {
        id: newId('conn_'),
        org_id: org.id,
        brand_id: brand.id,
        type: body.type,
        enabled,
        config_enc: ctx.encryptor.encrypt(JSON.stringify(body.config), aadOf(brand.id, body.type)),
      },
      ctx.clock.now(),
    );
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'connection.upserted',
      resourceType: 'connection',
      resourceId: row.id,
      metadata: { brand: brand.slug, type: body.type, enabled, created: row.created },
      events: [{ type: 'socialProvider.upserted', data: { brand: brand.slug, type: body.type, enabled } }],
    });
    return { connection: toConnection(ctx, row, brand), created: row.created };
  });
}

export async function setConnectionEnabled(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  type: ProviderType,
  enabled: boolean,
): Promise<ConnectionOut> {
  return ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const current = await q.findConnection(trx, brand.id, type, true);
    if (!current) throw notFound('connection');
    if (current.enabled === enabled) return toConnection(ctx, current, brand);
    const row = await q.setConnectionEnabled(trx, current.id, enabled, ctx.clock.now());
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: enabled ? 'connection.enabled' : 'connection.disabled',
      resourceType: 'connection',
      resourceId: row.id,
      metadata: { brand: brand.slug, type },
      events: [
        {
          type: enabled ? 'socialProvider.enabled' : 'socialProvider.disabled',
          data: { brand: brand.slug, type },
        },
      ],
    });
    return toConnection(ctx, row, brand);
  });
}

/** Removes the brand's own credentials; sign-in falls back to the operator's defaults, if any. */
export async function deleteConnection(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  type: ProviderType,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const current = await q.findConnection(trx, brand.id, type, true);
    if (!current) throw notFound('connection');
    await q.deleteConnection(trx, current.id);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'connection.deleted',
      resourceType: 'connection',
      resourceId: current.id,
      metadata: { brand: brand.slug, type },
    });
  });
}

export { operatorDefaultCredentials };

/**
 * The credentials a live brand signs in with for `type`: its own connection's config when it has an
 * enabled one; null when it has a disabled one (the brand turned the provider off); otherwise the
 * operator's defaults, or null when there are none. For the upstream sign-in flows.
 */
export async function resolveConnectionCredentials(
  ctx: AppContext,
  brandId: string,
  type: ProviderType,
): Promise<{ source: 'brand' | 'default'; config: ProviderConfig } | null> {
  const sealed = await q.findSealedConnection(ctx.db, brandId, type);
  if (sealed) {
    if (!sealed.enabled) return null;
    const config = JSON.parse(
      ctx.encryptor.decrypt(sealed.config_enc, aadOf(brandId, type)),
    ) as ProviderConfig;
    return { source: 'brand', config };
  }
  if (!(await liveBrandExists(ctx.db, brandId))) return null;
  const config = operatorDefaultCredentials(ctx, type);
  return config ? { source: 'default', config } : null;
}

/**
 * Provider types a brand offers: its own enabled connections, and the operator's defaults for the
 * types where the brand has no connection at all (a disabled connection switches the type off).
 */
export async function enabledProviderTypes(ctx: AppContext, brandId: string): Promise<ProviderType[]> {
  return enabledTypes(ctx, await q.connectionSwitches(ctx.db, brandId));
}
