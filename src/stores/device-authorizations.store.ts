import { sql } from 'kysely';
import type { Db, Executor } from '../db/schema.js';
import { isUniqueViolation } from '../db/errors.js';
import type { DeviceStore } from '../oidc/stores.js';

/** Deletes the device authorizations that expired before `before`. */
export async function sweepDevices(db: Executor, before: Date): Promise<void> {
  await db.deleteFrom('device_authorizations').where('expires_at', '<', before).execute();
}

/** `device_authorizations` (RFC 8628): owned here. */
export function deviceStore(db: Db): DeviceStore {
  return {
    async insert(row) {
      try {
        await db.insertInto('device_authorizations').values(row).execute();
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    },
    async findByDeviceCode(deviceCodeHash) {
      const row = await db
        .selectFrom('device_authorizations')
        .selectAll()
        .where('device_code_hash', '=', deviceCodeHash)
        .executeTakeFirst();
      return row ?? null;
    },
    async findPending(userCodeHash, now) {
      const row = await db
        .selectFrom('device_authorizations')
        .selectAll()
        .where('user_code_hash', '=', userCodeHash)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row ?? null;
    },
    async decide(userCodeHash, now, decision) {
      const row = await db
        .updateTable('device_authorizations')
        .set(
          decision.status === 'approved'
            ? { status: 'approved', user_id: decision.userId, auth_time: decision.authTime }
            : { status: 'denied', denial: decision.denial ?? null },
        )
        .where('user_code_hash', '=', userCodeHash)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async pollOnTime(id, now) {
      const row = await db
        .updateTable('device_authorizations')
        .set({ last_polled_at: now })
        .where('id', '=', id)
        .where(
          sql<boolean>`(last_polled_at is null or last_polled_at + make_interval(secs => poll_interval) <= ${now})`,
        )
        .returning('id')
        .executeTakeFirst();
      return !!row;
    },
    async slowDown(id, now, increment) {
      await db
        .updateTable('device_authorizations')
        .set((eb) => ({ poll_interval: eb('poll_interval', '+', increment), last_polled_at: now }))
        .where('id', '=', id)
        .execute();
    },
    async consumeApproved(id, now) {
      const row = await db
        .updateTable('device_authorizations')
        .set({ consumed_at: now })
        .where('id', '=', id)
        .where('status', '=', 'approved')
        .where('consumed_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },
  };
}
