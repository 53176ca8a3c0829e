import type { Db } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import type { EngineStores, Introspector } from '../oidc/stores.js';
import { type AccountStoreDeps, userProfileStore } from './user-profiles.store.js';
import { codeStore } from './authorization-codes.store.js';
import { clientStore } from './clients.store.js';
import { consentStore } from './consent-grants.store.js';
import { deviceStore } from './device-authorizations.store.js';
import { type EventStoreDeps, eventStore } from './events.store.js';
import { logoutDeliveryStore } from './logout-deliveries.store.js';
import { revocationStore } from './revocations.store.js';
import { sessionClientStore } from './sessions.store.js';
import { signingKeyStore } from './signing-keys.store.js';
import { tokenStore } from './tokens.store.js';
import { scopePolicies } from '../modules/scopes/scopes.queries.js';
import { unwiredGatePolicies } from '../oidc/gates.js';

/** What the engine's SQL stores get from the wiring (src/wiring.ts). */
export interface EngineStoreDeps extends EventStoreDeps, AccountStoreDeps {
  clock: Clock;
  /** Introspection of user API keys (the api-keys module), injected instead of imported. */
  introspectApiKey?: Introspector;
}

/** The engine's stores on the database (src/oidc/stores.ts declares them). */
export function createEngineStores(db: Db, deps: EngineStoreDeps): EngineStores {
  return {
    transaction: (fn) => db.transaction().execute((trx) => fn(trx)),
    clients: clientStore(db),
    codes: codeStore(db),
    tokens: tokenStore(db),
    revocations: revocationStore(db),
    devices: deviceStore(db),
    consent: consentStore(db),
    signingKeys: signingKeyStore(db),
    accounts: userProfileStore(db, deps),
    events: eventStore(db, deps),
    sessionClients: sessionClientStore(db),
    logoutDeliveries: logoutDeliveryStore(),
    introspectors: deps.introspectApiKey ? [deps.introspectApiKey] : [],
    gatedScopes: { ofBrand: (brandId) => scopePolicies(db, brandId) },
    gatePolicies: unwiredGatePolicies,
  };
}
