import { builtInRoleRows } from './built-in-roles.js';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { Executor, OrgRow, Trx } from '../../db/schema.js';
import { forbidden, notFound, unprocessable } from '../../http/errors.js';
import { BUILT_IN_ROLES } from '../../http/permissions.js';
import { diff, recordMutation } from '../../events/outbox.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { fileTrackers, resolveFileId } from '../files/files.service.js';
import * as q from './orgs.queries.js';
import type { CreateOrgInput, OrgView, UpdateOrgInput } from './orgs.schemas.js';

/**
 * What a handler of a deletion (an org's here, a brand's in brands.service.ts) gets besides the
 * transaction: the context, the deletion's time (the deleted row's `deleted_at`), and `afterCommit`,
 * for work that must wait for the commit (this instance's caches: `appChangeCommitted`).
 */
export interface DeletionScope {
  ctx: AppContext;
  now: Date;
  afterCommit(fn: () => void): void;
}

/**
 * Disables a module's resources of an org being deleted, inside the deletion's transaction. The
 * modules' handlers (brands, apps, connections, webhooks, token gates) are registered by wiring.ts
 * when it builds a context. Must not call out over the network.
 */
export type OrgDeletedHandler = (
  trx: Trx,
  orgId: string,
  clock: Clock,
  deletion: DeletionScope,
) => Promise<unknown>;
const orgDeletedHandlers: OrgDeletedHandler[] = [];

/** Registers a handler once (idempotent by reference). */
export function onOrgDeleted(handler: OrgDeletedHandler): void {
  if (!orgDeletedHandlers.includes(handler)) orgDeletedHandlers.push(handler);
}

export async function presentOrgs(db: Executor, ctx: AppContext, rows: OrgRow[]): Promise<OrgView[]> {
  const files = await fileTrackers(
    db,
    ctx.config,
    rows.map((r) => r.icon_file_id),
  );
  return rows.map((r) => {
    const o: OrgView = {
      id: r.id,
      name: r.name,
      slug: r.slug,
      createdBy: r.created_by,
      paymentProductId: r.payment_product_id,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    };
    if (r.description !== null) o.description = r.description;
    const icon = r.icon_file_id ? files.get(r.icon_file_id) : undefined;
    if (icon) o.iconFile = icon;
    if (r.payment_customer_id !== null) o.paymentCustomerId = r.payment_customer_id;
    return o;
  });
}

export async function presentOrg(db: Executor, ctx: AppContext, row: OrgRow): Promise<OrgView> {
  return (await presentOrgs(db, ctx, [row]))[0];
}

/**
 * Creates an org with its built-in roles; the creator becomes its Owner. The slug is claimed through
 * the unique `orgs_slug_key`: a live org or a reservation younger than 90 days answers 409, and an
 * expired reservation is released first, in the same transaction.
 */
export async function createOrg(ctx: AppContext, userId: string, input: CreateOrgInput): Promise<OrgView> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - defaults.orgSlugReservation * 1000);
  return ctx.db.transaction().execute(async (trx) => {
    await q.releaseExpiredSlugClaim(trx, input.slug, cutoff);
    const org = await q
      .insertOrg(trx, {
        id: newId('org_'),
        name: input.name,
        slug: input.slug,
        slug_claim: input.slug,
        description: input.description ?? null,
        icon_file_id: null,
        created_by: userId,
        payment_product_id: null,
        payment_customer_id: null,
        tier: 'identity',
        is_system: false,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .catch(mapDbError);
    const roles = builtInRoleRows(org.id, now);
    await q.insertRoles(trx, roles);
    const owner = roles.find((r) => r.built_in === 'owner')!;
    await q.insertMembership(trx, org.id, userId, now);
    await q.insertMemberRole(trx, org.id, userId, owner.id, now);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId: userId,
      action: 'org.created',
      resourceType: 'org',
      resourceId: org.id,
      metadata: { name: org.name, slug: org.slug },
    });
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId: userId,
      action: 'member.added',
      resourceType: 'member',
      resourceId: userId,
      metadata: { roles: [BUILT_IN_ROLES.owner.name] },
      events: [{ type: 'member.added', data: { user: userId, roles: [BUILT_IN_ROLES.owner.name] } }],
    });
    return presentOrg(trx, ctx, org);
  });
}

export async function listOrgs(
  ctx: AppContext,
  opts: { memberUserId?: string; limit: number; offset: number },
): Promise<{ items: OrgView[]; total: number }> {
  const { rows, total } = await q.listOrgs(ctx.db, opts);
  return { items: await presentOrgs(ctx.db, ctx, rows), total };
}

export async function updateOrg(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  input: UpdateOrgInput,
): Promise<OrgView> {
  return ctx.db.transaction().execute(async (trx) => {
    const current = await q.lockActiveOrg(trx, org.id);
    if (!current) throw notFound('organization');
    const patch: Parameters<typeof q.updateOrg>[2] = { updated_at: ctx.clock.now() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (input.iconFile !== undefined) {
      patch.icon_file_id =
        input.iconFile === null
          ? null
          : (
              await resolveFileId(trx, ctx.config, input.iconFile, 'iconFile', {
                uploadedBy: actorUserId,
                current: current.icon_file_id,
              })
            ).id;
    }
    const updated = await q.updateOrg(trx, org.id, patch);
    const changes = diff(
      { name: current.name, description: current.description, iconFile: current.icon_file_id },
      { name: updated.name, description: updated.description, iconFile: updated.icon_file_id },
      ['name', 'description', 'iconFile'],
    );
    if (Object.keys(changes.after).length > 0) {
      await recordMutation(trx, ctx.clock, {
        orgId: org.id,
        actorUserId,
        action: 'org.updated',
        resourceType: 'org',
        resourceId: org.id,
        metadata: changes,
      });
    }
    return presentOrg(trx, ctx, updated);
  });
}

/**
 * Soft-deletes an org: memberships disabled and every module's registered handler run (brands
 * deleted, their apps and connections disabled, webhooks and token gates disabled), in one
 * transaction. The slug stays claimed until the reservation ends.
 */
export async function deleteOrg(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  opts: { admin?: boolean } = {},
): Promise<void> {
  if (org.is_system) throw unprocessable('the system organization cannot be deleted');
  const afterCommit: Array<() => void> = [];
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    if (!(await q.lockActiveOrg(trx, org.id))) throw notFound('organization');
    // "Owner only" (interface): `org.delete` through a custom role is not enough. The admin mirror
    // deletes without membership.
    if (!opts.admin && !(await q.isOwner(trx, org.id, actorUserId)))
      throw forbidden('org.delete', 'only the Owner can delete the organization');
    const deleted = await q.softDeleteOrg(trx, org.id, now);
    if (!deleted) throw notFound('organization');
    await q.disableOrgMemberships(trx, org.id, now);
    const deletion: DeletionScope = { ctx, now, afterCommit: (fn) => afterCommit.push(fn) };
    for (const handler of orgDeletedHandlers) await handler(trx, org.id, ctx.clock, deletion);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'org.deleted',
      resourceType: 'org',
      resourceId: org.id,
      metadata: {
        slug: org.slug,
        slugReservedUntil: new Date(now.getTime() + defaults.orgSlugReservation * 1000).toISOString(),
      },
    });
  });
  for (const fn of afterCommit) fn();
}
