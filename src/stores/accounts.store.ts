import { limits } from '../config/defaults.js';
import { defaults } from '../config/defaults.js';
import { mapDbError } from '../http/db-conflicts.js';
import type { Executor, UserRow } from '../db/schema.js';
import { conflict } from '../http/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Encryptor } from '../lib/encryption.js';
import { newId } from '../lib/ids.js';
import { identityHash, type SignInIdentity } from '../oidc/signin/identities.js';
import type {
  AccountActivity,
  AccountDescription,
  AccountStore,
  NewUserFields,
  OAuthLinkInput,
} from '../oidc/signin/stores.js';

/** What the account SQL needs besides the executor. */
export interface AccountDeps {
  clock: Clock;
  encryptor: Encryptor;
  /** Appends to a user's sign-in history (the users module owns the table). */
  recordActivity(db: Executor, input: AccountActivity): Promise<void>;
}

const USERNAME_RE = new RegExp(limits.usernamePattern);

function personName(value: string | null | undefined): string | null {
  const v = value?.trim();
  return v ? v.slice(0, limits.personNameMax) : null;
}

/**
 * Creates a user (sign-in with a new wallet or provider account). A suggested username that is
 * invalid or held by another account (also one in its deletion grace window) is left out rather
 * than failing the sign-in: the user can pick one later. Runs in the caller's transaction.
 */
export async function createUser(trx: Executor, clock: Clock, fields: NewUserFields = {}): Promise<UserRow> {
  const now = clock.now();
  const candidate = fields.username?.trim().toLowerCase();
  const values = {
    id: newId('usr_'),
    username: candidate && USERNAME_RE.test(candidate) ? candidate : null,
    first_name: personName(fields.firstName),
    last_name: personName(fields.lastName),
    preferred_language: fields.preferredLanguage ?? null,
    phone_country_code: null,
    phone_number: null,
    profile_picture_id: null,
    external_profile_picture_url: fields.externalProfilePictureUrl ?? null,
    email: fields.email ?? null,
    email_verified: fields.emailVerified ?? false,
    last_seen: now,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  if (values.username) {
    // The database decides who gets the name; on a clash the user is created without one.
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
  return candidate.id;
}

async function liveUser(db: Executor, userId: string, lock = false): Promise<boolean> {
  let q = db.selectFrom('users').select('id').where('id', '=', userId).where('deleted_at', 'is', null);
  if (lock) q = q.forUpdate();
  return !!(await q.executeTakeFirst());
}

export interface OAuthAccount {
  userId: string;
  provider: string;
  externalUserId: string;
  emailAddress?: string | null;
  username?: string | null;
  accessToken?: string | null;
  refreshToken?: string | null;
  tokenExpiresAt?: Date | null;
}

/**
 * Records (or refreshes) the link between a user and a provider account. Provider tokens are sealed
 * with the server key, bound to the link id. A provider account linked to another user is a 409
 * `conflict` (the unique constraint decides).
 */
export async function upsertOAuthLink(
  ctx: { clock: Clock; encryptor: Encryptor },
  trx: Executor,
  a: OAuthAccount,
): Promise<string> {
  const now = ctx.clock.now();
  const existing = await findOAuthLink(trx, a.provider, a.externalUserId);
  const id = existing?.id ?? newId('oal_');
  if (existing && existing.user_id !== a.userId) throw conflict('this account is linked to another user');
  const seal = (v: string | null | undefined) => (v ? ctx.encryptor.encrypt(v, `oauth_link:${id}`) : null);
  const values = {
    email_address: a.emailAddress ?? null,
    username: a.username ?? null,
    access_token_enc: seal(a.accessToken),
    refresh_token_enc: seal(a.refreshToken),
    token_expires_at: a.tokenExpiresAt ?? null,
    last_used_at: now,
    updated_at: now,
  };
  if (existing) {
    await trx.updateTable('oauth_links').set(values).where('id', '=', id).execute();
  } else {
    await trx
      .insertInto('oauth_links')
      .values({
        id,
        user_id: a.userId,
        provider: a.provider,
        external_user_id: a.externalUserId,
        created_at: now,
        ...values,
      })
      .execute()
      .catch(mapDbError);
  }
  return id;
}

function findOAuthLink(db: Executor, provider: string, externalUserId: string) {
  return db
    .selectFrom('oauth_links')
    .select(['id', 'user_id'])
    .where('provider', '=', provider)
    .where('external_user_id', '=', externalUserId)
    .executeTakeFirst();
}

/** The decrypted provider tokens of a link (for provider calls and revocation). */
export async function oauthLinkTokens(
  ctx: { db: Executor; encryptor: Encryptor },
  linkId: string,
): Promise<{ accessToken: string | null; refreshToken: string | null } | null> {
  const link = await openLink(ctx.db, ctx.encryptor, linkId);
  return link ? { accessToken: link.accessToken, refreshToken: link.refreshToken } : null;
}

async function openLink(db: Executor, encryptor: Encryptor, linkId: string) {
  const row = await db
    .selectFrom('oauth_links')
    .select(['provider', 'brand_id', 'access_token_enc', 'refresh_token_enc'])
    .where('id', '=', linkId)
    .executeTakeFirst();
  if (!row) return null;
  const aad = `oauth_link:${linkId}`;
  return {
    provider: row.provider,
    brandId: row.brand_id,
    accessToken: row.access_token_enc ? encryptor.decrypt(row.access_token_enc, aad) : null,
    refreshToken: row.refresh_token_enc ? encryptor.decrypt(row.refresh_token_enc, aad) : null,
  };
}

/** The live user a provider account is linked to, if any. */
async function linkedUser(db: Executor, provider: string, externalUserId: string): Promise<string | null> {
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
 * Saves a sign-in's or link's provider account: a sign-in that brings tokens but no refresh token
 * keeps the refresh token stored; the link remembers the brand it was made through.
 */
async function saveOAuthLink(deps: AccountDeps, db: Executor, input: OAuthLinkInput): Promise<string> {
  let refreshToken = input.refreshToken;
  const existing = await findOAuthLink(db, input.provider, input.externalUserId);
  if (!refreshToken && existing && input.hasTokens)
    refreshToken =
      (await oauthLinkTokens({ db, encryptor: deps.encryptor }, existing.id))?.refreshToken ?? null;
  const id = await upsertOAuthLink(deps, db, { ...input, refreshToken });
  await db.updateTable('oauth_links').set({ brand_id: input.brandId }).where('id', '=', id).execute();
  return id;
}

async function describe(db: Executor, userId: string): Promise<AccountDescription | null> {
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

/** Accounts as sign-in sees them: `users`, `user_public_keys`, `oauth_links`, `deleted_identities`. */
export function accountStore(db: Executor, deps: AccountDeps): AccountStore {
  return {
    create: (fields) => createUser(db, deps.clock, fields),
    restoreIfInGrace: (identity) => restoreIfInGrace(db, deps.clock, identity),
    async discard(userId) {
      await db.deleteFrom('users').where('id', '=', userId).execute();
    },
    async touch(userId) {
      await db.updateTable('users').set({ last_seen: deps.clock.now() }).where('id', '=', userId).execute();
    },
    lockLive: (userId) => liveUser(db, userId, true),
    walletOwner: (address) => walletOwner(db, address),
    async touchWallet(address, now) {
      await db
        .updateTable('user_public_keys')
        .set({ last_used_at: now })
        .where('blockchain', '=', 'solana')
        .where('address', '=', address)
        .execute();
    },
    insertPrimaryWallet: (input) => insertPrimaryWallet(db, input),
    linkedUser: (provider, externalUserId) => linkedUser(db, provider, externalUserId),
    saveOAuthLink: (input) => saveOAuthLink(deps, db, input),
    oauthLink: (linkId) => openLink(db, deps.encryptor, linkId),
    describe: (userId) => describe(db, userId),
    recordActivity: (input) => deps.recordActivity(db, input),
  };
}

/** The live account that holds this wallet, if any. */
async function walletOwner(db: Executor, address: string): Promise<string | null> {
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

/** Links the wallet as the user's primary key; false when another account holds it (a race lost). */
async function insertPrimaryWallet(
  db: Executor,
  input: { id: string; userId: string; address: string; now: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('user_public_keys')
    .values({
      id: input.id,
      user_id: input.userId,
      blockchain: 'solana',
      address: input.address,
      label: null,
      is_primary: true,
      last_used_at: input.now,
      created_at: input.now,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}
