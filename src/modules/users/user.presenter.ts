import { type Static, Type } from 'typebox';
import type { Config } from '../../config/index.js';
import type { Executor, UserRow } from '../../db/schema.js';
import { FileTracker } from '../../http/schemas.js';
import { fileTrackers } from '../files/files.service.js';
import { walletsOfUsers } from './users.queries.js';

export const UserPublicKeySchema = Type.Object({
  id: Type.String(),
  blockchain: Type.Literal('solana'),
  address: Type.String(),
  isPrimary: Type.Boolean(),
  label: Type.Optional(Type.String()),
  lastUsedAt: Type.Optional(Type.String()),
});

/** The User of the interface (full shape): never email, phone or anything secret. */
export const UserSchema = Type.Object({
  id: Type.String(),
  username: Type.Optional(Type.String()),
  firstName: Type.Optional(Type.String()),
  lastName: Type.Optional(Type.String()),
  preferredLanguage: Type.Optional(Type.String()),
  profilePicture: Type.Optional(FileTracker),
  externalProfilePictureUrl: Type.Optional(Type.String()),
  lastSeen: Type.String(),
  userPublicKeys: Type.Optional(Type.Array(UserPublicKeySchema)),
});
export type UserView = Static<typeof UserSchema>;

export type UserPublicKeyView = Static<typeof UserPublicKeySchema>;

/** A wallet row as the interface shows it. */
export function presentPublicKey(row: {
  id: string;
  address: string;
  label: string | null;
  is_primary: boolean;
  last_used_at: Date | null;
}): UserPublicKeyView {
  const k: UserPublicKeyView = {
    id: row.id,
    blockchain: 'solana',
    address: row.address,
    isPrimary: row.is_primary,
  };
  if (row.label) k.label = row.label;
  if (row.last_used_at) k.lastUsedAt = row.last_used_at.toISOString();
  return k;
}

/** The wallets of a batch of users (primary first, then by link time), in one query. */
export async function publicKeysOf(
  db: Executor,
  userIds: string[],
): Promise<Map<string, UserPublicKeyView[]>> {
  const out = new Map<string, UserPublicKeyView[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows = await walletsOfUsers(db, [...new Set(userIds)]);
  for (const r of rows) out.get(r.user_id)?.push(presentPublicKey(r));
  return out;
}

/** Users as the interface shows them, in the order given; profile pictures resolved in one query. */
export async function presentUsers(db: Executor, config: Config, rows: UserRow[]): Promise<UserView[]> {
  const files = await fileTrackers(
    db,
    config,
    rows.map((r) => r.profile_picture_id),
  );
  const keys = await publicKeysOf(
    db,
    rows.map((r) => r.id),
  );
  const users = rows.map((r) => {
    const u: UserView = { id: r.id, lastSeen: r.last_seen.toISOString() };
    if (r.username) u.username = r.username;
    if (r.first_name) u.firstName = r.first_name;
    if (r.last_name) u.lastName = r.last_name;
    if (r.preferred_language) u.preferredLanguage = r.preferred_language;
    const pic = r.profile_picture_id ? files.get(r.profile_picture_id) : undefined;
    if (pic) u.profilePicture = pic;
    if (r.external_profile_picture_url) u.externalProfilePictureUrl = r.external_profile_picture_url;
    u.userPublicKeys = keys.get(r.id) ?? [];
    return u;
  });
  return users;
}

export async function presentUser(db: Executor, config: Config, row: UserRow): Promise<UserView> {
  const [user] = await presentUsers(db, config, [row]);
  return user;
}
