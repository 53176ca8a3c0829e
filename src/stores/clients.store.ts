import type { Db } from '../db/schema.js';
import { findLiveClient } from '../modules/apps/apps.queries.js';
import { scopePolicies } from '../modules/scopes/scopes.queries.js';
import type { ClientStore } from '../oidc/stores.js';

/**
 * The issuer's clients are apps (the apps module owns the table), with the names of their brand's
 * gated scopes, which a client-credentials token never carries (no user's wallet to check). The engine
 * caches the result, so the second read happens once per client per cache period.
 */
export function clientStore(db: Db): ClientStore {
  return {
    async find(clientId, tx) {
      const on = tx ?? db;
      const client = await findLiveClient(on, clientId);
      if (!client) return null;
      const gated = await scopePolicies(on, client.brandId);
      return { ...client, gatedScopes: [...gated.keys()] };
    },
  };
}
