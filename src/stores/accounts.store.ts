import { limits } from '../config/defaults.js';
import type { Executor, UserRow } from '../db/schema.js';
import { mapDbError } from '../http/db-conflicts.js';
import { ApiError, conflict } from '../http/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Encryptor } from '../lib/encryption.js';
import { newId } from '../lib/ids.js';
import * as q from '../modules/users/users.queries.js';
import type { AccountActivity, AccountStore, NewUserFields, OAuthLinkInput } from '../oidc/signin/stores.js';

export { restoreIfInGrace } from '../modules/users/users.queries.js';

/** What the account store needs besides the executor. */
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
export function createUser(trx: Executor, clock: Clock, fields: NewUserFields = {}): Promise<UserRow> {
  const now = clock.now();
  const candidate = fields.username?.trim().toLowerCase();
  return q.insertUser(trx, {
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
  });
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
  const existing = await q.findOAuthLink(trx, a.provider, a.externalUserId);
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
  if (existing) await q.updateOAuthLink(trx, id, values);
  else {
    const row = { id, user_id: a.userId, provider: a.provider, external_user_id: a.externalUserId };
    await q.insertOAuthLink(trx, { ...row, created_at: now, ...values }).catch(mapDbError);
  }
  return id;
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
  const row = await q.sealedOAuthLink(db, linkId);
  if (!row) return null;
  const aad = `oauth_link:${linkId}`;
  return {
    provider: row.provider,
    brandId: row.brand_id,
    accessToken: row.access_token_enc ? encryptor.decrypt(row.access_token_enc, aad) : null,
    refreshToken: row.refresh_token_enc ? encryptor.decrypt(row.refresh_token_enc, aad) : null,
  };
}

/**
 * Saves a sign-in's or link's provider account: a sign-in that brings tokens but no refresh token
 * keeps the refresh token stored; the link remembers the brand it was made through.
 */
async function saveOAuthLink(deps: AccountDeps, db: Executor, input: OAuthLinkInput): Promise<string | null> {
  let refreshToken = input.refreshToken;
  const existing = await q.findOAuthLink(db, input.provider, input.externalUserId);
  if (!refreshToken && existing && input.hasTokens)
    refreshToken = (await openLink(db, deps.encryptor, existing.id))?.refreshToken ?? null;
  let id: string;
  try {
    id = await upsertOAuthLink(deps, db, { ...input, refreshToken });
  } catch (err) {
    // Another user holds the provider account (found, or the unique constraint decided).
    if (err instanceof ApiError && err.status === 409) return null;
    throw err;
  }
  await q.setOAuthLinkBrand(db, id, input.brandId);
  return id;
}

/** Accounts as sign-in sees them, on the users module's queries (users, wallets, links). */
export function accountStore(db: Executor, deps: AccountDeps): AccountStore {
  return {
    create: (fields) => createUser(db, deps.clock, fields),
    restoreIfInGrace: (identity) => q.restoreIfInGrace(db, deps.clock, identity),
    discard: (userId) => q.deleteUserRow(db, userId),
    touch: (userId) => q.touchUser(db, userId, deps.clock.now()),
    lockLive: (userId) => q.liveUser(db, userId, true),
    walletOwner: (address) => q.walletOwner(db, address),
    touchWallet: (address, now) => q.touchWallet(db, address, now),
    touchWalletOwner: (address, now) => q.touchWalletOwner(db, address, now),
    insertPrimaryWallet: (input) => q.insertPrimaryWallet(db, input),
    linkedUser: (provider, externalUserId) => q.linkedUser(db, provider, externalUserId),
    adoptLegacyLink: (input) => q.adoptLegacyLink(db, input),
    saveOAuthLink: (input) => saveOAuthLink(deps, db, input),
    oauthLink: (linkId) => openLink(db, deps.encryptor, linkId),
    describe: (userId) => q.describeAccount(db, userId),
    recordActivity: (input) => deps.recordActivity(db, input),
  };
}
