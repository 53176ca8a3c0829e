import { defaults, limits } from '../../config/defaults.js';
import type { Executor, UserRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { identityHash, type SignInIdentity } from './identities.js';
import './users.queries.js';

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
