import type { Updateable } from 'kysely';
import { limits } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { UsersTable } from '../../db/schema.js';
import {
  ApiError,
  type FieldError,
  forbidden,
  notFound,
  unprocessable,
  validationFailed,
} from '../../http/errors.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { resolveFileId } from '../files/files.service.js';
import { providerRevocationFor } from '../../oidc/signin/provider-revocation.js';
import { type ActivityType, recordActivity } from './activity.js';
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
import * as q from './users.queries.js';

const USERNAME_RE = new RegExp(limits.usernamePattern);

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
          await resolveFileId(ctx.db, ctx.config, patch.profilePicture, 'profilePicture', {
            uploadedBy: callerId,
          })
        ).id;
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 'validation_failed') throw e;
        fields.push(...((e.details?.fields as FieldError[]) ?? []));
      }
    }
  }
  if (fields.length > 0) throw validationFailed(fields, 422, 'profile validation failed');
  const row = await q
    .updateLiveUser(ctx.db, targetId, { ...set, updated_at: ctx.clock.now() })
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

export { lockAndCountSignInMethods } from './users.queries.js';

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
    const methods = await q.lockAndCountSignInMethods(trx, userId);
    const link = await q.findOAuthLinkOf(trx, userId, linkId);
    if (!link) throw notFound('linked account');
    if (methods <= 1) throw lastSignInMethod();
    revokeAtProvider = await providerRevocationFor(ctx, trx, link.id);
    await q.deleteOAuthLink(trx, link.id);
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

// ---------------------------------------------------------------------------------------------
// Admin lookups

/** A live user by id, username or wallet address; null when none. */
export async function findByIdentifier(ctx: AppContext, identifier: string): Promise<UserView | null> {
  const value = identifier.trim();
  let row = await findUserById(ctx.db, value);
  if (!row && normalizeUsername(value)) row = await findUserByUsername(ctx.db, value.toLowerCase());
  if (!row && isSolanaAddress(value)) {
    row = await q.findLiveUserByWallet(ctx.db, value);
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
  const rows = await q.findLiveUsersByWallets(ctx.db, unique);
  const users = await presentUsers(
    ctx.db,
    ctx.config,
    rows.map(({ wallet_address: _w, ...u }) => u),
  );
  const byAddress = new Map(rows.map((r, i) => [r.wallet_address, users[i]]));
  return addresses.map((address) => ({ address, user: byAddress.get(address) ?? null }));
}
