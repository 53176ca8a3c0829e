import type { BrandDeletedHandler } from '../brands/brands.service.js';
import type { OrgDeletedHandler } from '../orgs/orgs.service.js';
import * as q from './connections.queries.js';

// The connections' part of deleting what they hang off, wired in src/wiring.ts: the brands and orgs
// modules do not import connections.

/** A deleted brand's connections are disabled; each is a `socialProvider.disabled` event. */
export const disableConnectionsOfDeletedBrand: BrandDeletedHandler = async (trx, brand, deletion) => {
  const types = await q.disableConnectionsOfBrand(trx, brand.id, deletion.now);
  return {
    metadata: { disabledConnections: types },
    events: types.map((type) => ({
      type: 'socialProvider.disabled' as const,
      data: { brand: brand.slug, type },
    })),
  };
};

/** A deleted org's connections are disabled. */
export const disableConnectionsOfDeletedOrg: OrgDeletedHandler = async (trx, orgId, _clock, deletion) => {
  await q.disableConnectionsOfOrg(trx, orgId, deletion.now);
};
