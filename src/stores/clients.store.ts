import type { Db } from '../db/schema.js';
import { findLiveClient } from '../modules/apps/apps.queries.js';
import type { ClientStore } from '../oidc/stores.js';

/** The issuer's clients are apps (the apps module owns the table). */
export function clientStore(db: Db): ClientStore {
  return { find: (clientId) => findLiveClient(db, clientId) };
}
