import type { AppContext } from '../../context.js';
import type { Trx } from '../../db/schema.js';
import { diff, recordMutation } from '../../events/outbox.js';
import { mapDbError } from '../../http/db-conflicts.js';
import { notFound, validationFailed } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { WRAPPED_SOL_MINT } from '../../solana/metadata.js';
import { gateWriteCommitted, invalidateGateLookups, invalidateOrgGateLookups } from './token-gates.check.js';
import {
  deleteGate,
  disableGatesOfOrg,
  findGate,
  findGateForUpdate,
  insertGate,
  listGates,
  type TokenGateRow,
  updateGate,
} from './token-gates.queries.js';
import type { CreateGateInput, TokenGateView, UpdateGateInput } from './token-gates.schemas.js';

export interface OrgRef {
  id: string;
  slug: string;
}

/** Raw units without leading zeros ("007" → "7"); the schema already allows digits only. */
export function canonicalAmount(digits: string): string {
  return BigInt(digits).toString();
}

export function toView(row: TokenGateRow, orgSlug: string): TokenGateView {
  return {
    id: row.id,
    org: orgSlug,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    kind: row.kind,
    mintAddress: row.mint_address,
    minHoldings: row.min_holdings,
    enabled: row.enabled,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The fields tokenGate.updated compares. */
function eventFields(row: TokenGateRow) {
  return {
    name: row.name,
    description: row.description,
    minHoldings: row.min_holdings,
    enabled: row.enabled,
  };
}

export async function createGate(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  input: CreateGateInput,
): Promise<TokenGateView> {
  if (!isSolanaAddress(input.mintAddress))
    throw validationFailed([
      { field: 'mintAddress', code: 'invalid_format', message: 'must be a base58 Solana address (32 bytes)' },
    ]);
  const kind = input.kind ?? 'token';
  if (kind === 'sol' && input.mintAddress !== WRAPPED_SOL_MINT)
    throw validationFailed([
      {
        field: 'mintAddress',
        code: 'invalid_value',
        message: `a sol gate's mintAddress must be ${WRAPPED_SOL_MINT}`,
      },
    ]);
  const now = ctx.clock.now();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const created = await insertGate(trx, {
      id: newId('gate_'),
      org_id: org.id,
      name: input.name,
      description: input.description ?? null,
      kind,
      mint_address: input.mintAddress,
      min_holdings: canonicalAmount(input.minHoldings),
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    });
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'tokenGate.created',
      resourceType: 'tokenGate',
      resourceId: created.id,
      metadata: { name: created.name },
      events: [
        {
          type: 'tokenGate.created',
          data: {
            gateId: created.id,
            name: created.name,
            kind: created.kind,
            mintAddress: created.mint_address,
            minHoldings: created.min_holdings,
            enabled: created.enabled,
          },
        },
      ],
    });
    await invalidateGateLookups(ctx, trx, created.id);
    return created;
  });
  gateWriteCommitted(ctx, row.id);
  return toView(row, org.slug);
}

export async function listOrgGates(
  ctx: AppContext,
  org: OrgRef,
  page: { limit: number; offset: number },
): Promise<{ items: TokenGateView[]; total: number }> {
  const { rows, total } = await listGates(ctx.db, org.id, page);
  return { items: rows.map((r) => toView(r, org.slug)), total };
}

export async function getGate(ctx: AppContext, org: OrgRef, gateId: string): Promise<TokenGateView> {
  const row = await findGate(ctx.db, org.id, gateId);
  if (!row) throw notFound('token gate');
  return toView(row, org.slug);
}

/** Applies the changed fields; records tokenGate.updated only when something changed. */
export async function patchGate(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  gateId: string,
  input: UpdateGateInput,
): Promise<TokenGateView> {
  const row = await ctx.db.transaction().execute(async (trx) => {
    const before = await findGateForUpdate(trx, org.id, gateId);
    if (!before) throw notFound('token gate');
    const next = {
      name: input.name ?? before.name,
      description: input.description === undefined ? before.description : input.description,
      min_holdings:
        input.minHoldings === undefined ? before.min_holdings : canonicalAmount(input.minHoldings),
      enabled: input.enabled ?? before.enabled,
    };
    const changes = diff(eventFields(before), eventFields({ ...before, ...next }), [
      'name',
      'description',
      'minHoldings',
      'enabled',
    ]);
    if (Object.keys(changes.after).length === 0) return before;
    const after = await updateGate(trx, gateId, { ...next, updated_at: ctx.clock.now() });
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'tokenGate.updated',
      resourceType: 'tokenGate',
      resourceId: gateId,
      metadata: { changed: Object.keys(changes.after) },
      events: [{ type: 'tokenGate.updated', data: { gateId, ...changes } }],
    });
    await invalidateGateLookups(ctx, trx, gateId);
    return after;
  });
  gateWriteCommitted(ctx, gateId);
  return toView(row, org.slug);
}

export async function removeGate(
  ctx: AppContext,
  org: OrgRef,
  actorUserId: string,
  gateId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const deleted = await deleteGate(trx, org.id, gateId).catch(mapDbError);
    if (!deleted) throw notFound('token gate');
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'tokenGate.deleted',
      resourceType: 'tokenGate',
      resourceId: gateId,
      events: [{ type: 'tokenGate.deleted', data: { gateId } }],
    });
    await invalidateGateLookups(ctx, trx, gateId);
  });
  gateWriteCommitted(ctx, gateId);
}

/**
 * For org deletion, inside its transaction: turns every gate of the org off. The check already
 * answers 404 for a deleted org's gates; disabling them keeps them off should the org be restored.
 * Every instance drops its cached lookups of the org's gates when the deletion commits.
 */
export async function disableOrgTokenGates(trx: Trx, orgId: string, clock: Clock): Promise<string[]> {
  const ids = await disableGatesOfOrg(trx, orgId, clock.now());
  await invalidateOrgGateLookups(trx, orgId);
  return ids;
}
