import type { Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { Executor, OrgRow } from '../../db/schema.js';
import { recordMutation } from '../../events/outbox.js';
import { conflict, notFound, validationFailed } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { STANDARD_SCOPES } from '../../oidc/discovery.js';
import { checkGatePolicyReference } from '../../oidc/gates.js';
import { lockBrand, requireBrand } from '../brands/brands.service.js';
import type { Scope, ScopeCreateBody, ScopePatchBody } from './scopes.schemas.js';
import * as q from './scopes.queries.js';

type ScopeOut = Static<typeof Scope>;

export function toScope(row: q.BrandScopeRow): ScopeOut {
  return {
    name: row.name,
    description: row.description,
    gatePolicyId: row.gate_policy_id,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listScopes(ctx: AppContext, org: OrgRow, brandSlug: string) {
  const brand = await requireBrand(ctx.db, org, brandSlug);
  const rows = await q.listScopes(ctx.db, brand.id);
  return { items: rows.map(toScope), total: rows.length };
}

export async function getScope(ctx: AppContext, org: OrgRow, brandSlug: string, name: string) {
  const brand = await requireBrand(ctx.db, org, brandSlug);
  const row = await q.findScope(ctx.db, brand.id, name);
  if (!row) throw notFound('scope');
  return toScope(row);
}

export async function createScope(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  body: Static<typeof ScopeCreateBody>,
): Promise<ScopeOut> {
  if ((STANDARD_SCOPES as readonly string[]).includes(body.name))
    throw validationFailed([
      {
        field: 'name',
        code: 'reserved',
        message: `"${body.name}" is a standard OIDC scope, always available`,
      },
    ]);
  // No app lists a scope before it exists, so no cached client changes here.
  return ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    await checkGatePolicyReference(ctx, trx, org.id, body.gatePolicyId, 'gatePolicyId');
    const now = ctx.clock.now();
    const row = await q
      .insertScope(trx, {
        id: newId('scope_'),
        org_id: org.id,
        brand_id: brand.id,
        name: body.name,
        description: body.description,
        gate_policy_id: body.gatePolicyId ?? null,
        created_at: now,
        updated_at: now,
      })
      .catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.scope.created',
      resourceType: 'brand_scope',
      resourceId: row.id,
      metadata: { brand: brand.slug, name: row.name, gatePolicyId: row.gate_policy_id },
    });
    return toScope(row);
  });
}

export async function updateScope(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  name: string,
  body: Static<typeof ScopePatchBody>,
): Promise<ScopeOut> {
  let committed = () => {};
  const scope = await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const before = await q.findScope(trx, brand.id, name);
    if (!before) throw notFound('scope');
    const description = body.description ?? before.description;
    const gatePolicyId = body.gatePolicyId === undefined ? before.gate_policy_id : body.gatePolicyId;
    const changed = [
      ...(description !== before.description ? ['description'] : []),
      ...(gatePolicyId !== before.gate_policy_id ? ['gatePolicyId'] : []),
    ];
    if (changed.length === 0) return toScope(before);
    if (changed.includes('gatePolicyId')) {
      await checkGatePolicyReference(ctx, trx, org.id, gatePolicyId, 'gatePolicyId');
      committed = await gatedScopesChanged(ctx, trx, brand.id);
    }
    const row = await q.updateScope(trx, brand.id, name, {
      description,
      gate_policy_id: gatePolicyId,
      updated_at: ctx.clock.now(),
    });
    if (!row) throw notFound('scope');
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.scope.updated',
      resourceType: 'brand_scope',
      resourceId: row.id,
      metadata: { brand: brand.slug, name, changed },
    });
    return toScope(row);
  });
  committed();
  return scope;
}

/**
 * Which of the brand's scopes are gated is part of each of its apps' cached client (the
 * client-credentials grant refuses a gated scope from it): every instance drops them when `trx`
 * commits, not when the entries expire. Returns what to run after the commit.
 */
async function gatedScopesChanged(ctx: AppContext, trx: Executor, brandId: string): Promise<() => void> {
  if (!ctx.hooks.brandAppsChanged) throw new Error('ctx.hooks.brandAppsChanged is not wired');
  return ctx.hooks.brandAppsChanged(trx, brandId);
}

/**
 * Refused with 409 while a live app of the brand lists the scope. The brand row is locked for update,
 * and app writes that validate scopes lock it for share, so no app can pick the scope up meanwhile.
 */
export async function deleteScope(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  name: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'update');
    const scope = await q.findScope(trx, brand.id, name);
    if (!scope) throw notFound('scope');
    if (!ctx.hooks.appsUsingScope) throw new Error('ctx.hooks.appsUsingScope is not wired');
    const users = await ctx.hooks.appsUsingScope(trx, brand.id, name);
    if (users.length > 0)
      throw conflict('the scope is still listed in the allowedScopes of apps of this brand', {
        apps: users,
      });
    await q.deleteScope(trx, brand.id, name);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'brand.scope.deleted',
      resourceType: 'brand_scope',
      resourceId: scope.id,
      metadata: { brand: brand.slug, name },
    });
  });
}
