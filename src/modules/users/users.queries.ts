import { type Insertable, type RawBuilder, type Selectable, type Updateable, sql } from 'kysely';
import { defaults } from '../../config/defaults.js';
import type {
  ActivityTable,
  ApiKeysTable,
  Executor,
  OAuthLinksTable,
  UserPublicKeysTable,
  UserRow,
  UsersTable,
} from '../../db/schema.js';
import { invalidateEverywhere } from '../../events/invalidation.js';
import type { Clock } from '../../lib/clock.js';
import { identityHash, type SignInIdentity } from '../../oidc/signin/identities.js';

export type ActivityRow = Selectable<ActivityTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OAuthLinkRow = Selectable<OAuthLinksTable>;

/**
 * Every write here to `users` or `user_public_keys` that changes what an instance caches of a user
 * (liveness, profile claims, wallets: src/oidc/user-cache.ts) calls this with the user's id: this
 * process drops them at once, every instance when `db`'s transaction commits (just after the write
 * without one). Not called by: `insertUser` and `insertPrimaryWallet` (a user just made is in no
 * cache), `touchUser` / `touchWallet` (last use times, not cached).
 */
function usersChanged(db: Executor, userIds: string[]): Promise<void> {
  return invalidateEverywhere(
    db,
    'user',
    userIds.length > defaults.tokenInvalidationMaxKeys ? ['*'] : userIds,
  );
}

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('username', '=', username)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Whether any account, including one in its deletion grace window, holds the username. */
export async function usernameTaken(db: Executor, username: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
  return !!row;
}

export async function recentActivity(db: Executor, userId: string, limit: number): Promise<ActivityRow[]> {
  return db
    .selectFrom('activity')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function oauthLinksOf(db: Executor, userId: string): Promise<OAuthLinkRow[]> {
  return db
    .selectFrom('oauth_links')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** A live user's profile claims source (for the issuer's tokens and /userinfo), with the uploaded picture's key. */
export async function findLiveUserProfile(db: Executor, userId: string) {
  const row = await db
    .selectFrom('users')
    .leftJoin('files', 'files.id', 'users.profile_picture_id')
    .select([
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'users.preferred_language',
      'users.email',
      'users.email_verified',
      'users.external_profile_picture_url',
      'files.file_key',
    ])
    .where('users.id', '=', userId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** Whether the user exists and is not deleted (nor in the deletion window). */
export async function isUserLive(db: Executor, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select(['id'])
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row;
}

/** The id of the account (deleted ones included) with this id or this (lower-cased) username. */
export async function findAnyUserIdByIdOrUsername(db: Executor, ident: string): Promise<string | undefined> {
  const byId = await db.selectFrom('users').select('id').where('id', '=', ident).executeTakeFirst();
  if (byId) return byId.id;
  const byName = await db
    .selectFrom('users')
    .select('id')
    .where('username', '=', ident.toLowerCase())
    .executeTakeFirst();
  return byName?.id;
}

/** The user holding this wallet address, if any. */
export async function findUserIdByWallet(db: Executor, address: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('user_public_keys')
    .select('user_id')
    .where('address', '=', address)
    .executeTakeFirst();
  return row?.user_id;
}

// ---------------------------------------------------------------------------------------------
// Sign-in identities (src/stores/accounts.store.ts implements sign-in's AccountStore with these)

/**
 * Inserts a user; with a username, the database decides who gets the name: on a clash (also with
 * an account in its deletion grace window) the user is inserted without one.
 */
export async function insertUser(trx: Executor, values: Insertable<UsersTable>): Promise<UserRow> {
  if (values.username) {
    const row = await trx
      .insertInto('users')
      .values(values)
      .onConflict((oc) => oc.constraint('users_username_key').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return row;
  }
  return trx
    .insertInto('users')
    .values({ ...values, username: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteUserRow(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', userId).execute();
  await usersChanged(db, [userId]);
}

export async function touchUser(db: Executor, userId: string, now: Date): Promise<void> {
  await db.updateTable('users').set({ last_seen: now }).where('id', '=', userId).execute();
}

/**
 * Common table expressions for a sign-in with the wallet whose address the CTE `source` holds (in
 * `address`): the wallet marked used and its live holder seen; `owner` yields the holder's id, no
 * row when no live account holds the wallet (nothing is written then).
 */
export function walletOwnerCtes(source: string, now: Date): RawBuilder<unknown> {
  return sql`
    pk as (
      update user_public_keys set last_used_at = ${now}::timestamptz
      from users
      where users.id = user_public_keys.user_id and users.deleted_at is null
        and user_public_keys.blockchain = 'solana'
        and user_public_keys.address = (select address from ${sql.table(source)})
      returning user_public_keys.user_id),
    owner as (
      update users set last_seen = ${now}::timestamptz from pk where users.id = pk.user_id
      returning users.id)`;
}

/**
 * A sign-in with a wallet a live account holds, in one statement: the wallet marked used and its
 * user seen. The user's id, or null when no live account holds the wallet (nothing is written).
 */
export async function touchWalletOwner(db: Executor, address: string, now: Date): Promise<string | null> {
  const { rows } = await sql<{ id: string }>`
    with given as (select ${address}::text as address), ${walletOwnerCtes('given', now)}
    select id from owner`.execute(db);
  return rows[0]?.id ?? null;
}

export async function touchWallet(db: Executor, address: string, now: Date): Promise<void> {
  await db
    .updateTable('user_public_keys')
    .set({ last_used_at: now })
    .where('blockchain', '=', 'solana')
    .where('address', '=', address)
    .execute();
}

/**
 * Sign-in with an identity that no live account holds: if an account that was deleted less than
 * `accountDeletionGrace` ago had this identity, the deletion is reversed and its id returned (the
 * caller then links the identity to it again, as on a first sign-in). Otherwise null.
 * Runs in the caller's transaction; two concurrent sign-ins both get the same id.
 */
export async function restoreIfInGrace(
  trx: Executor,
  clock: Clock,
  identity: SignInIdentity,
): Promise<string | null> {
  const cutoff = new Date(clock.nowMs() - defaults.accountDeletionGrace * 1000);
  const candidate = await trx
    .selectFrom('deleted_identities as d')
    .innerJoin('users as u', 'u.id', 'd.user_id')
    .select('u.id')
    .where('d.identity_hash', '=', identityHash(identity))
    .where('u.deleted_at', 'is not', null)
    .where('u.deleted_at', '>', cutoff)
    .orderBy('u.deleted_at', 'desc')
    .executeTakeFirst();
  if (!candidate) return null;
  const restored = await trx
    .updateTable('users')
    .set({ deleted_at: null, updated_at: clock.now() })
    .where('id', '=', candidate.id)
    .where('deleted_at', '>', cutoff)
    .returning('id')
    .executeTakeFirst();
  if (!restored) {
    // A concurrent sign-in restored it first (or the sweeper took it): live means restored.
    return (await liveUser(trx, candidate.id)) ? candidate.id : null;
  }
  await trx.deleteFrom('deleted_identities').where('user_id', '=', candidate.id).execute();
  await usersChanged(trx, [candidate.id]);
  return candidate.id;
}

export async function liveUser(db: Executor, userId: string, lock = false): Promise<boolean> {
  let q = db.selectFrom('users').select('id').where('id', '=', userId).where('deleted_at', 'is', null);
  if (lock) q = q.forUpdate();
  return !!(await q.executeTakeFirst());
}

export function findOAuthLink(db: Executor, provider: string, externalUserId: string) {
  return db
    .selectFrom('oauth_links')
    .select(['id', 'user_id'])
    .where('provider', '=', provider)
    .where('external_user_id', '=', externalUserId)
    .executeTakeFirst();
}

type OAuthLinkValues = Pick<
  OAuthLinkRow,
  | 'email_address'
  | 'username'
  | 'access_token_enc'
  | 'refresh_token_enc'
  | 'token_expires_at'
  | 'last_used_at'
  | 'updated_at'
>;

export async function updateOAuthLink(db: Executor, id: string, values: OAuthLinkValues): Promise<void> {
  await db.updateTable('oauth_links').set(values).where('id', '=', id).execute();
}

export async function insertOAuthLink(
  db: Executor,
  row: OAuthLinkValues &
    Pick<OAuthLinkRow, 'id' | 'user_id' | 'provider' | 'external_user_id' | 'created_at'>,
): Promise<void> {
  await db.insertInto('oauth_links').values(row).execute();
}

export async function setOAuthLinkBrand(db: Executor, id: string, brandId: string): Promise<void> {
  await db.updateTable('oauth_links').set({ brand_id: brandId }).where('id', '=', id).execute();
}

/** A link's provider, brand and sealed tokens. */
export function sealedOAuthLink(db: Executor, linkId: string) {
  return db
    .selectFrom('oauth_links')
    .select(['provider', 'brand_id', 'access_token_enc', 'refresh_token_enc'])
    .where('id', '=', linkId)
    .executeTakeFirst();
}

/** The live user a provider account is linked to, if any. */
export async function linkedUser(
  db: Executor,
  provider: string,
  externalUserId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_links')
    .innerJoin('users', 'users.id', 'oauth_links.user_id')
    .select('users.id')
    .where('oauth_links.provider', '=', provider)
    .where('oauth_links.external_user_id', '=', externalUserId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Moves a live user's link from its legacy key to `externalUserId`, only when it was last used
 * through `brandId`; the user's id, or null when there is no such link.
 */
export async function adoptLegacyLink(
  db: Executor,
  input: { provider: string; legacyExternalUserId: string; externalUserId: string; brandId: string },
): Promise<string | null> {
  const row = await db
    .updateTable('oauth_links')
    .set({ external_user_id: input.externalUserId })
    .where('provider', '=', input.provider)
    .where('external_user_id', '=', input.legacyExternalUserId)
    .where('brand_id', '=', input.brandId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('users')
          .select('users.id')
          .whereRef('users.id', '=', 'oauth_links.user_id')
          .where('users.deleted_at', 'is', null),
      ),
    )
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** What the sign-in pages call an account (deleted ones included, flagged). */
export async function describeAccount(db: Executor, userId: string) {
  const user = await db
    .selectFrom('users')
    .select(['id', 'username', 'first_name', 'last_name', 'email', 'deleted_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) return null;
  const wallet = await db
    .selectFrom('user_public_keys')
    .select('address')
    .where('user_id', '=', userId)
    .orderBy('is_primary', 'desc')
    .orderBy('created_at', 'asc')
    .executeTakeFirst();
  return {
    id: user.id,
    username: user.username,
    firstName: user.first_name,
    lastName: user.last_name,
    email: user.email,
    wallet: wallet?.address ?? null,
    deleted: user.deleted_at !== null,
  };
}

/** The live account that holds this wallet, if any. */
export async function walletOwner(db: Executor, address: string): Promise<string | null> {
  const row = await db
    .selectFrom('user_public_keys')
    .innerJoin('users', 'users.id', 'user_public_keys.user_id')
    .select('users.id')
    .where('user_public_keys.blockchain', '=', 'solana')
    .where('user_public_keys.address', '=', address)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Links the wallet as the user's primary key; false when another account holds it (a race lost).
 * Only for a user made or restored in the same transaction (sign-in): such a user is in no cache
 * (a restore announces itself), so this announces nothing; link to a live user with `insertWallet`.
 */
export async function insertPrimaryWallet(
  db: Executor,
  input: { id: string; userId: string; address: string; now: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('user_public_keys')
    .values(walletRow({ ...input, label: null, isPrimary: true, lastUsedAt: input.now }))
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

// ---------------------------------------------------------------- account deletion

/** Marks a live account deleted; false when there is none. */
export async function markUserDeleted(db: Executor, userId: string, now: Date): Promise<boolean> {
  const user = await db
    .updateTable('users')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (user) await usersChanged(db, [userId]);
  return !!user;
}

/** Deletes the user's wallets; returns their addresses. */
export async function deleteWalletsOf(db: Executor, userId: string): Promise<Array<{ address: string }>> {
  const rows = await db
    .deleteFrom('user_public_keys')
    .where('user_id', '=', userId)
    .returning(['address'])
    .execute();
  await usersChanged(db, [userId]);
  return rows;
}

/** Deletes the user's linked provider accounts; returns their identities. */
export async function deleteOAuthLinksOf(db: Executor, userId: string) {
  return db
    .deleteFrom('oauth_links')
    .where('user_id', '=', userId)
    .returning(['provider', 'external_user_id'])
    .execute();
}

/** Keeps the hashes of a deleted account's sign-in identities for its grace window. */
export async function keepDeletedIdentities(
  db: Executor,
  userId: string,
  hashes: string[],
  now: Date,
): Promise<void> {
  await db
    .insertInto('deleted_identities')
    .values(hashes.map((identity_hash) => ({ identity_hash, user_id: userId, deleted_at: now })))
    .onConflict((oc) => oc.columns(['identity_hash', 'user_id']).doUpdateSet({ deleted_at: now }))
    .execute();
}

/** Locks (skipping locked ones) up to `limit` accounts deleted at or before `cutoff`, oldest first. */
export function lockAccountsDeletedBefore(db: Executor, cutoff: Date, limit: number) {
  return db
    .selectFrom('users')
    .select(['id', 'deleted_at'])
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<=', cutoff)
    .orderBy('deleted_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Moves accounts to the graveyard (id and dates only) and deletes their rows. */
export async function buryAccounts(
  db: Executor,
  due: Array<{ id: string; deleted_at: Date | null }>,
  now: Date,
): Promise<void> {
  await db
    .insertInto('users_graveyard')
    .values(due.map((u) => ({ id: u.id, deleted_at: u.deleted_at as Date, purged_at: now })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .deleteFrom('users')
    .where(
      'id',
      'in',
      due.map((u) => u.id),
    )
    .execute();
  await usersChanged(
    db,
    due.map((u) => u.id),
  );
}

// ---------------------------------------------------------------- profile, sign-in methods, lookups

/** Updates a live account; the new row, or undefined when there is none. */
export async function updateLiveUser(db: Executor, id: string, set: Updateable<UsersTable>) {
  const row = await db
    .updateTable('users')
    .set(set)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (row) await usersChanged(db, [id]);
  return row;
}

/**
 * Locks the user's row so that concurrent removals of sign-in methods serialise, and counts the
 * methods left (wallets and linked provider accounts).
 */
export async function lockAndCountSignInMethods(db: Executor, userId: string): Promise<number> {
  await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
  const [links, keys] = await Promise.all([
    db
      .selectFrom('oauth_links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('user_public_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ]);
  return Number(links.n) + Number(keys.n);
}

/** The user's linked provider account `linkId` (id and provider). */
export function findOAuthLinkOf(db: Executor, userId: string, linkId: string) {
  return db
    .selectFrom('oauth_links')
    .select(['id', 'provider'])
    .where('id', '=', linkId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function deleteOAuthLink(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('oauth_links').where('id', '=', id).execute();
}

/** The live user holding this wallet address. */
export function findLiveUserByWallet(db: Executor, address: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('user_public_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('u')
    .where('k.address', '=', address)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The live users holding these wallet addresses, each with the address it holds. */
export function findLiveUsersByWallets(db: Executor, addresses: string[]) {
  return db
    .selectFrom('user_public_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('u')
    .select('k.address as wallet_address')
    .where('k.address', 'in', addresses)
    .where('u.deleted_at', 'is', null)
    .execute();
}

/** The wallets of a batch of users (primary first, then by link time), in one query. */
export function walletsOfUsers(db: Executor, userIds: string[]) {
  return db
    .selectFrom('user_public_keys')
    .select(['id', 'user_id', 'address', 'label', 'is_primary', 'last_used_at'])
    .where('user_id', 'in', userIds)
    .orderBy('is_primary', 'desc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/**
 * A CTE body: the history row inserted for the user the CTE `source` yields (`user_id`); nothing
 * when it yields no row (a statement that finds the user as it signs in).
 */
export function activityInsertFor(
  source: string,
  a: Omit<Insertable<ActivityTable>, 'user_id'>,
): RawBuilder<unknown> {
  return sql`
    insert into activity (id, user_id, type, provider, ip, user_agent, created_at)
    select ${a.id}, user_id, ${a.type}, ${a.provider ?? null}::text, ${a.ip ?? null}::text,
      ${a.user_agent ?? null}::text, ${a.created_at}::timestamptz
    from ${sql.table(source)}`;
}

/** The insert of one sign-in history row (run alone, or composed into the sign-in's statement). */
export function activityInsert(db: Executor, row: Insertable<ActivityTable>) {
  return db.insertInto('activity').values(row);
}

// ---------------------------------------------------------------- the account's wallets (wallets.service.ts)

const WALLET_VIEW = ['id', 'address', 'label', 'is_primary', 'last_used_at'] as const;

/** Whether the user has a primary wallet. */
export async function hasPrimaryWallet(db: Executor, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_public_keys')
    .select('id')
    .where('user_id', '=', userId)
    .where('is_primary', '=', true)
    .executeTakeFirst();
  return !!row;
}

interface NewWallet {
  id: string;
  userId: string;
  address: string;
  label: string | null;
  isPrimary: boolean;
  now: Date;
}

function walletRow(w: NewWallet & { lastUsedAt: Date | null }): Insertable<UserPublicKeysTable> {
  return {
    id: w.id,
    user_id: w.userId,
    blockchain: 'solana',
    address: w.address,
    label: w.label,
    is_primary: w.isPrimary,
    last_used_at: w.lastUsedAt,
    created_at: w.now,
  };
}

/** Links a Solana wallet to the user; undefined when any account holds the address already. */
export async function insertWallet(db: Executor, input: NewWallet) {
  const row = await db
    .insertInto('user_public_keys')
    .values(walletRow({ ...input, lastUsedAt: null }))
    .onConflict((oc) => oc.constraint('user_public_keys_address_key').doNothing())
    .returning(WALLET_VIEW)
    .executeTakeFirst();
  if (row) await usersChanged(db, [input.userId]);
  return row;
}

/** The row holding a Solana address, locked until the transaction ends (it must exist). */
export function lockWalletByAddress(db: Executor, address: string) {
  return db
    .selectFrom('user_public_keys')
    .select(['id', 'user_id', 'is_primary'])
    .where('blockchain', '=', 'solana')
    .where('address', '=', address)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function deleteWallet(db: Executor, id: string): Promise<void> {
  const rows = await db.deleteFrom('user_public_keys').where('id', '=', id).returning('user_id').execute();
  await usersChanged(
    db,
    rows.map((r) => r.user_id),
  );
}

/** Makes the user's oldest wallet (if any) the primary one. */
export async function promoteOldestWallet(db: Executor, userId: string): Promise<void> {
  const next = await db
    .selectFrom('user_public_keys')
    .select('id')
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .executeTakeFirst();
  if (!next) return;
  await db.updateTable('user_public_keys').set({ is_primary: true }).where('id', '=', next.id).execute();
  await usersChanged(db, [userId]);
}

/** The user's wallet `id` (id and address); with `lock`, locked until the transaction ends. */
export function findWalletOf(db: Executor, userId: string, id: string, lock = false) {
  const q = db
    .selectFrom('user_public_keys')
    .select(['id', 'address'])
    .where('id', '=', id)
    .where('user_id', '=', userId);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

/** Unsets the primary flag of the user's wallets other than `keepId`. */
export async function unsetOtherPrimaryWallets(db: Executor, userId: string, keepId: string): Promise<void> {
  await db
    .updateTable('user_public_keys')
    .set({ is_primary: false })
    .where('user_id', '=', userId)
    .where('is_primary', '=', true)
    .where('id', '!=', keepId)
    .execute();
  await usersChanged(db, [userId]);
}

export async function updateWalletRow(
  db: Executor,
  id: string,
  set: { label?: string | null; is_primary?: boolean },
) {
  const { user_id, ...row } = await db
    .updateTable('user_public_keys')
    .set(set)
    .where('id', '=', id)
    .returning([...WALLET_VIEW, 'user_id'])
    .executeTakeFirstOrThrow();
  await usersChanged(db, [user_id]);
  return row;
}

/** Deletes the user's wallet `id`; undefined when the user has no such wallet. */
export async function deleteWalletOf(db: Executor, userId: string, id: string) {
  const row = await db
    .deleteFrom('user_public_keys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(['is_primary'])
    .executeTakeFirst();
  if (row) await usersChanged(db, [userId]);
  return row;
}
