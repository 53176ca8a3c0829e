import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import type { BrandDeletedHandler } from '../brands/brands.service.js';
import type { OrgDeletedHandler } from '../orgs/orgs.service.js';
import { appChangeCommitted, notifyAppChanged } from './apps.notify.js';
import * as q from './apps.queries.js';

// The apps' part of deleting what they hang off, wired in src/wiring.ts: the brands and orgs modules
// do not import apps. Every instance's client cache drops the disabled apps when the deletion
// commits, not when entries expire.

/** A deleted brand's apps are soft-deleted and disabled; each is an `oidcClient.deleted` event. */
export const disableAppsOfDeletedBrand: BrandDeletedHandler = async (trx, brand, deletion) => {
  const ids = await q.disableAppsOfBrand(trx, brand.id, deletion.now);
  await notifyAppChanged(deletion.ctx, trx, ids);
  deletion.afterCommit(() => appChangeCommitted(deletion.ctx, ids));
  return {
    metadata: { disabledApps: ids },
    events: ids.map((clientId) => ({
      type: 'oidcClient.deleted' as const,
      data: { clientId, brand: brand.slug },
    })),
  };
};

/**
 * Something every app of the brand carries in its cached client changed in `trx` (which of the
 * brand's scopes are gated): every instance drops those clients when `trx` commits. Returns what
 * to run after the commit, for this instance (`ctx.hooks.brandAppsChanged`, wired in src/wiring.ts).
 */
export async function brandAppsChanged(ctx: AppContext, trx: Executor, brandId: string): Promise<() => void> {
  const ids = await q.clientIdsOfBrand(trx, brandId);
  await notifyAppChanged(ctx, trx, ids);
  return () => appChangeCommitted(ctx, ids);
}

/** A deleted org's apps are disabled. */
export const disableAppsOfDeletedOrg: OrgDeletedHandler = async (trx, orgId, _clock, deletion) => {
  const ids = await q.disableAppsOfOrg(trx, orgId, deletion.now);
  await notifyAppChanged(deletion.ctx, trx, ids);
  deletion.afterCommit(() => appChangeCommitted(deletion.ctx, ids));
};
