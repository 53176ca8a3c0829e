import type { Executor } from '../db/schema.js';
import type { ConnectionLookups, SigninStores } from '../oidc/signin/stores.js';
import { type AccountDeps, accountStore } from './accounts.store.js';
import { codeStore } from './authorization-codes.store.js';
import { interactionStore } from './interactions.store.js';
import { providerStateStore } from './provider-states.store.js';
import { sessionStore } from './sessions.store.js';
import { type FileUrls, signinBrandStore } from './signin-brands.store.js';
import { walletChallengeStore } from './wallet-challenges.store.js';

/** What the sign-in stores need from the rest of the house (built in wiring.ts). */
export interface SigninStoreDeps extends AccountDeps {
  fileUrls: FileUrls;
  connections: ConnectionLookups;
}

/** The SQL implementation of sign-in's stores on `db` (the pool, or a transaction). */
export function createSigninStores(db: Executor, deps: SigninStoreDeps): SigninStores {
  const stores: SigninStores = {
    interactions: interactionStore(db),
    sessions: sessionStore(db),
    walletChallenges: walletChallengeStore(db),
    providerStates: providerStateStore(db),
    accounts: accountStore(db, deps),
    brands: signinBrandStore(db, deps.fileUrls),
    connections: deps.connections,
    codes: codeStore(db),
    atomic: (fn) =>
      db.isTransaction ? fn(stores) : db.transaction().execute((trx) => fn(createSigninStores(trx, deps))),
    on: (executor) => (executor === db ? stores : createSigninStores(executor, deps)),
  };
  return stores;
}
