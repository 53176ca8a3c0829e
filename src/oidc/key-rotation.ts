import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { activation, newSigningKeyRow } from './keys.js';

/**
 * Scheduled signing-key rotation (KEY_ROTATION_DAYS; off when unset). Each key signs for that many
 * days: a day before the newest key's period ends (`keyPublishLead`) the next one is created with
 * `activates_at` at the period's end, so every client's JWKS has it before the first token it
 * signs; the keys it replaces are retired at that moment and stay in the JWKS until their last
 * tokens expire (`retiredKeyGrace`). Every instance runs this (src/jobs); the database decides: under
 * the key-creation lock, a newest key that is not yet due (or is itself still waiting to sign)
 * means there is nothing to do, so a rotation happens once however many instances check. Returns
 * the new kid, or null.
 */
export async function rotateKeysOnSchedule(ctx: AppContext): Promise<string | null> {
  const days = ctx.config.keyRotationDays;
  if (!days) return null;
  return ctx.stores.signingKeys.withCreationLock(async (keys) => {
    const [newest] = await keys.list();
    if (!newest) return null;
    const now = ctx.clock.nowMs();
    const due = activation(newest) + days * 24 * 3600 * 1000;
    const lead = defaults.keyPublishLead * 1000;
    if (now < due - lead) return null;
    const row = await newSigningKeyRow(ctx.encryptor, ctx.clock);
    // Published at least a day before it signs, even when the schedule was missed (instances down).
    const activatesAt = new Date(Math.max(due, now + lead));
    await keys.insertScheduled({ ...row, activates_at: activatesAt });
    return row.kid;
  });
}
