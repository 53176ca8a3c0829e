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

/** A deleted org's apps are disabled. */
export const disableAppsOfDeletedOrg: OrgDeletedHandler = async (trx, orgId, _clock, deletion) => {
  const ids = await q.disableAppsOfOrg(trx, orgId, deletion.now);
  await notifyAppChanged(deletion.ctx, trx, ids);
  deletion.afterCommit(() => appChangeCommitted(deletion.ctx, ids));
};
