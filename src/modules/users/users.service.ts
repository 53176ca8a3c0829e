import type { Updateable } from 'kysely';
import { defaults, limits } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { Executor, UserRow, UsersTable } from '../../db/schema.js';
import {
  ApiError,
  conflict,
  type FieldError,
  forbidden,
  notFound,
  unprocessable,
  validationFailed,
} from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { resolveFileId } from '../files/files.service.js';
import { providerRevocationFor } from '../../oidc/signin/providers/revocation.js';
import { type ActivityType, recordActivity } from './activity.js';
import { identityHash, type SignInIdentity } from './identities.js';
import { ISO_639_1 } from './languages.js';
import { presentUser, presentUsers, publicKeysOf, type UserView } from './user.presenter.js';
import {
  findUserById,
  findUserByUsername,
  type OAuthLinkRow,
  oauthLinksOf,
  recentActivity,
  usernameTaken,
} from './users.queries.js';

export type { SignInIdentity } from './identities.js';

export interface NewUserFields {
  /** Suggested username (from a provider); dropped when invalid or already taken. */
  username?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  emailVerified?: boolean;
  preferredLanguage?: string | null;
  externalProfilePictureUrl?: string | null;
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
    const live = await trx
      .selectFrom('users')
      .select('id')
      .where('id', '=', candidate.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return live?.id ?? null;
  }
  await trx.deleteFrom('deleted_identities').where('user_id', '=', candidate.id).execute();
  return candidate.id;
}

/** Marks the user as seen now (sign-in). */
export async function touchUser(db: Executor, clock: Clock, userId: string): Promise<void> {
  await db.updateTable('users').set({ last_seen: clock.now() }).where('id', '=', userId).execute();
}

// ---------------------------------------------------------------------------------------------
// Profile

export interface ProfilePatch {
  firstName?: string | null;
  lastName?: string | null;
  username?: string;
  profilePicture?: string | null;
  phoneNumber?: { countryCode: string; number: string } | null;
  preferredLanguage?: string | null;
}

/** The caller's own live account (the principal may outlive it only by a race). */
export async function currentUser(ctx: AppContext, userId: string): Promise<UserView> {
  const row = await findUserById(ctx.db, userId);
  if (!row) throw notFound('user');
  return presentUser(ctx.db, ctx.config, row);
}

/** Lowercases and trims; null when the result is not a valid username. */
export function normalizeUsername(value: string): string | null {
  const v = value.trim().toLowerCase();
  return USERNAME_RE.test(v) ? v : null;
}

/**
 * `E.164`: a country code of 1–3 digits and a subscriber number, at most 15 digits in all.
 * Spaces, dots, dashes and parentheses in the number are accepted and dropped.
 */
function normalizePhone(
  phone: { countryCode: string; number: string },
  fields: FieldError[],
): { countryCode: string; number: string } | null {
  const cc = phone.countryCode.trim().replace(/^\+/, '');
  const number = phone.number.trim().replace(/[\s.()-]/g, '');
  let ok = true;
  if (!/^[1-9]\d{0,2}$/.test(cc)) {
    fields.push({
      field: 'phoneNumber.countryCode',
      code: 'invalid_format',
      message: 'must be a country calling code of 1 to 3 digits, such as "+44"',
    });
    ok = false;
  }
  if (!/^\d{4,14}$/.test(number)) {
    fields.push({ field: 'phoneNumber.number', code: 'invalid_format', message: 'must be 4 to 14 digits' });
    ok = false;
  } else if (ok && cc.length + number.length > 15) {
    fields.push({
      field: 'phoneNumber.number',
      code: 'too_long',
      message: 'country code and number together exceed the 15 digits of E.164',
    });
    ok = false;
  }
  return ok ? { countryCode: `+${cc}`, number } : null;
}

function checkPersonName(field: string, value: string | null | undefined, fields: FieldError[]) {
  if (value === undefined || value === null) return value;
  const v = value.trim();
  if (v.length < 1) fields.push({ field, code: 'too_short', message: 'must not be blank' });
  else if (v.length > limits.personNameMax)
    fields.push({ field, code: 'too_long', message: `must be at most ${limits.personNameMax} characters` });
  return v;
}

/**
 * PATCH /users/:id: only the caller's own account (403 otherwise). Field rule failures answer 422
 * `validation_failed` with every failing field; a username held by another account (also one in
 * its deletion grace window) answers 409 `conflict`, decided by the unique constraint.
 */
export async function updateProfile(
  ctx: AppContext,
  callerId: string,
  targetId: string,
  patch: ProfilePatch,
): Promise<UserView> {
  if (callerId !== targetId) throw forbidden([], 'a user can only update their own profile');
  const fields: FieldError[] = [];
  const set: Updateable<UsersTable> = {};
  const first = checkPersonName('firstName', patch.firstName, fields);
  if (first !== undefined) set.first_name = first;
  const last = checkPersonName('lastName', patch.lastName, fields);
  if (last !== undefined) set.last_name = last;
  if (patch.username !== undefined) {
    const username = normalizeUsername(patch.username);
    if (!username)
      fields.push({
        field: 'username',
        code: 'invalid_format',
        message: 'must be 3 to 30 lowercase letters, digits or hyphens',
      });
    else set.username = username;
  }
  if (patch.preferredLanguage !== undefined) {
    const lang = patch.preferredLanguage?.trim().toLowerCase() ?? null;
    if (lang !== null && !ISO_639_1.has(lang))
      fields.push({
        field: 'preferredLanguage',
        code: 'invalid_value',
        message: 'must be an ISO 639-1 code',
      });
    else set.preferred_language = lang;
  }
  if (patch.phoneNumber !== undefined) {
    if (patch.phoneNumber === null) {
      set.phone_country_code = null;
      set.phone_number = null;
    } else {
      const phone = normalizePhone(patch.phoneNumber, fields);
      if (phone) {
        set.phone_country_code = phone.countryCode;
        set.phone_number = phone.number;
      }
    }
  }
  if (patch.profilePicture !== undefined) {
    if (patch.profilePicture === null) set.profile_picture_id = null;
    else {
      try {
        set.profile_picture_id = (
          await resolveFileId(ctx.db, ctx.config, patch.profilePicture, 'profilePicture')
        ).id;
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 'validation_failed') throw e;
        fields.push(...((e.details?.fields as FieldError[]) ?? []));
      }
    }
  }
  if (fields.length > 0) throw validationFailed(fields, 422, 'profile validation failed');
  const row = await ctx.db
    .updateTable('users')
    .set({ ...set, updated_at: ctx.clock.now() })
    .where('id', '=', targetId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
    .catch(mapDbError);
  if (!row) throw notFound('user');
  return presentUser(ctx.db, ctx.config, row);
}

/**
 * A pre-check only (PATCH decides): a name is available when it is valid and no account holds it,
 * including an account in its deletion grace window. An invalid name is a 400 with the reason.
 */
export async function usernameAvailable(ctx: AppContext, value: string): Promise<boolean> {
  const username = normalizeUsername(value);
  if (!username)
    throw validationFailed([
      {
        field: 'username',
        code: 'invalid_format',
        message: 'must be 3 to 30 lowercase letters, digits or hyphens',
      },
    ]);
  return !(await usernameTaken(ctx.db, username));
}

// ---------------------------------------------------------------------------------------------
// Activity, providers, linked OAuth accounts

/** The interface's count of sign-in events on GET /users/me/activity. */
export const ACTIVITY_SHOWN = 5;

export async function activityOf(ctx: AppContext, userId: string) {
  const rows = await recentActivity(ctx.db, userId, ACTIVITY_SHOWN);
  return rows.map((r) => {
    const item: {
      timestamp: string;
      type: ActivityType;
      provider?: string;
      ip?: string;
      userAgent?: string;
    } = { timestamp: r.created_at.toISOString(), type: r.type as ActivityType };
    if (r.provider) item.provider = r.provider;
    if (r.ip) item.ip = r.ip;
    if (r.user_agent) item.userAgent = r.user_agent;
    return item;
  });
}

function presentOAuthProvider(row: OAuthLinkRow) {
  const p: {
    type: 'oauth';
    id: string;
    provider: string;
    externalUserId?: string;
    emailAddress?: string;
    username?: string;
  } = { type: 'oauth', id: row.id, provider: row.provider, externalUserId: row.external_user_id };
  if (row.email_address) p.emailAddress = row.email_address;
  if (row.username) p.username = row.username;
  return p;
}

export async function authenticationProviders(ctx: AppContext, userId: string) {
  const links = await oauthLinksOf(ctx.db, userId);
  const keys = (await publicKeysOf(ctx.db, [userId])).get(userId) ?? [];
  return [...links.map(presentOAuthProvider), ...keys.map((k) => ({ type: 'publicKey' as const, ...k }))];
}

function presentOAuthToken(row: OAuthLinkRow) {
  const r: {
    id: string;
    provider: string;
    emailAddress?: string;
    username?: string;
    lastUsedAt?: string;
    createdAt: string;
  } = { id: row.id, provider: row.provider, createdAt: row.created_at.toISOString() };
  if (row.email_address) r.emailAddress = row.email_address;
  if (row.username) r.username = row.username;
  if (row.last_used_at) r.lastUsedAt = row.last_used_at.toISOString();
  return r;
}

export async function oauthTokenRecords(ctx: AppContext, userId: string) {
  return (await oauthLinksOf(ctx.db, userId)).map(presentOAuthToken);
}

/**
 * Locks the user's row so that concurrent removals of sign-in methods serialise, and counts the
 * methods left (wallets and linked provider accounts).
 */
export async function lockAndCountSignInMethods(trx: Executor, userId: string): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
  const [links, keys] = await Promise.all([
    trx
      .selectFrom('oauth_links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
    trx
      .selectFrom('user_public_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ]);
  return Number(links.n) + Number(keys.n);
}

export const lastSignInMethod = () =>
  unprocessable("this is the account's last sign-in method; link another one before removing it");

/**
 * DELETE /users/me/oauth-tokens/:id: unlinks the provider account and drops its tokens. Provider-side
 * revocation comes with the upstream-provider work. The last sign-in method cannot be removed.
 */
export async function unlinkOAuthAccount(
  ctx: AppContext,
  userId: string,
  linkId: string,
  meta: { ip?: string; userAgent?: string },
): Promise<void> {
  let revokeAtProvider: () => Promise<boolean> = async () => false;
  await ctx.db.transaction().execute(async (trx) => {
    const methods = await lockAndCountSignInMethods(trx, userId);
    const link = await trx
      .selectFrom('oauth_links')
      .select(['id', 'provider'])
      .where('id', '=', linkId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (!link) throw notFound('linked account');
    if (methods <= 1) throw lastSignInMethod();
    revokeAtProvider = await providerRevocationFor(ctx, trx, link.id);
    await trx.deleteFrom('oauth_links').where('id', '=', link.id).execute();
    await recordActivity(trx, ctx.clock, {
      userId,
      type: 'unlink_provider',
      provider: link.provider,
      ...meta,
    });
  });
  // After commit, best effort: the link is gone whether or not the provider answers.
  await revokeAtProvider();
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
 * For the upstream-provider sign-in: records (or refreshes) the link between a user and a provider
 * account. Provider tokens are sealed with the server key, bound to the link id. A provider account
 * linked to another user is a 409 `conflict` (the unique constraint decides).
 */
export async function upsertOAuthLink(ctx: AppContext, trx: Executor, a: OAuthAccount): Promise<string> {
  const now = ctx.clock.now();
  const existing = await trx
    .selectFrom('oauth_links')
    .select(['id', 'user_id'])
    .where('provider', '=', a.provider)
    .where('external_user_id', '=', a.externalUserId)
    .executeTakeFirst();
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

/** The user a provider account signs in to, if linked. */
export async function findUserIdByOAuth(
  db: Executor,
  provider: string,
  externalUserId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_links')
    .select('user_id')
    .where('provider', '=', provider)
    .where('external_user_id', '=', externalUserId)
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** The decrypted provider tokens of a link (for provider calls and revocation). */
export async function oauthLinkTokens(
  ctx: AppContext,
  linkId: string,
): Promise<{ accessToken: string | null; refreshToken: string | null } | null> {
  const row = await ctx.db
    .selectFrom('oauth_links')
    .select(['access_token_enc', 'refresh_token_enc'])
    .where('id', '=', linkId)
    .executeTakeFirst();
  if (!row) return null;
  const aad = `oauth_link:${linkId}`;
  return {
    accessToken: row.access_token_enc ? ctx.encryptor.decrypt(row.access_token_enc, aad) : null,
    refreshToken: row.refresh_token_enc ? ctx.encryptor.decrypt(row.refresh_token_enc, aad) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Admin lookups

/** A live user by id, username or wallet address; null when none. */
export async function findByIdentifier(ctx: AppContext, identifier: string): Promise<UserView | null> {
  const value = identifier.trim();
  let row = await findUserById(ctx.db, value);
  if (!row && normalizeUsername(value)) row = await findUserByUsername(ctx.db, value.toLowerCase());
  if (!row && isSolanaAddress(value)) {
    row = await ctx.db
      .selectFrom('user_public_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .selectAll('u')
      .where('k.address', '=', value)
      .where('u.deleted_at', 'is', null)
      .executeTakeFirst();
  }
  return row ? presentUser(ctx.db, ctx.config, row) : null;
}

/** Each address (validated: base58, 32 bytes) with the live user holding it, in the order given. */
export async function findByWallets(ctx: AppContext, addresses: string[]) {
  const fields: FieldError[] = [];
  addresses.forEach((a, i) => {
    if (!isSolanaAddress(a))
      fields.push({
        field: `addresses.${i}`,
        code: 'invalid_format',
        message: 'must be a base58 Solana address (32 bytes)',
      });
  });
  if (fields.length > 0) throw validationFailed(fields);
  const unique = [...new Set(addresses)];
  const rows = await ctx.db
    .selectFrom('user_public_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('u')
    .select('k.address as wallet_address')
    .where('k.address', 'in', unique)
    .where('u.deleted_at', 'is', null)
    .execute();
  const users = await presentUsers(
    ctx.db,
    ctx.config,
    rows.map(({ wallet_address: _w, ...u }) => u),
  );
  const byAddress = new Map(rows.map((r, i) => [r.wallet_address, users[i]]));
  return addresses.map((address) => ({ address, user: byAddress.get(address) ?? null }));
}
