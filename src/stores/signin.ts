import { sql } from 'kysely';
import type { Executor } from '../db/schema.js';
import { activityRow, recordActivityQuery } from '../modules/users/activity.js';
import { activityInsertFor, walletOwnerCtes } from '../modules/users/users.queries.js';
import type { ConnectionLookups, SigninStores } from '../oidc/signin/stores.js';
import { type AccountDeps, accountStore } from './accounts.store.js';
import { codeInsert, codeInsertFor, codeStore } from './authorization-codes.store.js';
import {
  completeSignedInFor,
  completeSignedInUpdate,
  interactionStore,
  liveInteraction,
} from './interactions.store.js';
import { providerStateStore } from './provider-states.store.js';
import { sessionInsert, sessionInsertFor, sessionStore } from './sessions.store.js';
import { type FileUrls, signinBrandStore } from './signin-brands.store.js';
import { consumeLiveUpdate, walletChallengeStore } from './wallet-challenges.store.js';

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
    async finishSignIn(f) {
      if (!db.isTransaction)
        throw new Error('finishSignIn runs in a transaction: a gone interaction undoes it');
      const { session: s } = f;
      const signedIn = { userId: s.userId, sessionId: s.id, authTime: s.authTime };
      const { rows } = await sql<{ id: string }>`
        with completed as (${completeSignedInUpdate(db, f.interactionId, signedIn, f.now)}),
        opened as (${sessionInsert(db, s)}),
        issued as (${codeInsert(db, f.code)}),
        recorded as (${recordActivityQuery(db, deps.clock, f.activity)})
        select id from completed`.execute(db);
      return rows.length > 0;
    },
    async signInWithWallet(f) {
      const expected = { purpose: 'signin', brandId: f.brandId, now: f.now };
      const consume = consumeLiveUpdate(db, f.messageHash, expected)
        .where('address', '=', f.address)
        .where((eb) => eb.exists(liveInteraction(db, f.interactionId, f.now).select('id')));
      const signedIn = { sessionId: f.session.id, authTime: f.session.authTime };
      const { rows } = await sql<{ owner_id: string | null; finished: boolean }>`
        with consumed as (${consume}),
        ${walletOwnerCtes('consumed', f.now)},
        completed as (${completeSignedInFor('owner', f.interactionId, signedIn, f.now)}),
        opened as (${sessionInsertFor('completed', f.session)}),
        issued as (${codeInsertFor('completed', f.code)}),
        recorded as (${activityInsertFor('completed', activityRow(deps.clock, f.activity))})
        select (select id from owner) as owner_id, exists (select 1 from completed) as finished
        from consumed`.execute(db);
      const row = rows[0];
      return row ? { ownerId: row.owner_id, finished: row.finished } : null;
    },
    atomic: (fn) =>
      db.isTransaction ? fn(stores) : db.transaction().execute((trx) => fn(createSigninStores(trx, deps))),
    on: (executor) => (executor === db ? stores : createSigninStores(executor, deps)),
  };
  return stores;
}
