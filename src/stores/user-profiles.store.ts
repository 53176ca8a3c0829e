import type { Db } from '../db/schema.js';
import { findLiveUserProfile, isUserLive, walletsOfUsers } from '../modules/users/users.queries.js';
import type { ActivityInput } from '../modules/users/activity.js';
import type { AccountStore } from '../oidc/stores.js';

/** The accounts the engine reads (the users module owns the table). */
export interface AccountStoreDeps {
  /** The public URL of an uploaded file (profile pictures). */
  fileUrl: (fileKey: string) => string;
  /** The users module's activity log. */
  recordActivity: (input: ActivityInput) => Promise<void>;
}

export function userProfileStore(db: Db, deps: AccountStoreDeps): AccountStore {
  return {
    async profile(userId) {
      const row = await findLiveUserProfile(db, userId);
      if (!row) return null;
      return {
        id: row.id,
        username: row.username,
        givenName: row.first_name,
        familyName: row.last_name,
        // An uploaded picture is the user's own choice; the provider's picture is the fallback.
        picture: row.file_key ? deps.fileUrl(row.file_key) : row.external_profile_picture_url,
        locale: row.preferred_language,
        email: row.email,
        emailVerified: row.email_verified,
      };
    },
    isLive: (userId) => isUserLive(db, userId),
    async wallets(userId) {
      const rows = await walletsOfUsers(db, [userId]);
      return rows.map((r) => ({ address: r.address, isPrimary: r.is_primary }));
    },
    recordDeviceAuthorized: (input) => deps.recordActivity({ ...input, type: 'device_authorized' }),
  };
}
