import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { sha256 } from '../lib/hash.js';
import { newId, newSecret, randomAlphanumeric } from '../lib/ids.js';
import type { Client } from './clients.js';
import type { DeviceRow } from './stores.js';

/** No vowels (no words) and no look-alikes (0/O, 1/I/L, 5/S …): 20 letters, 8 of them ≈ 34.6 bits. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

export type { DeviceRow };

/** `bcdf-ghjk`, `BCDFGHJK`, `bcdf ghjk` → `BCDFGHJK`; null when it cannot be a user code. */
export function normalizeUserCode(input: string): string | null {
  if (typeof input !== 'string' || input.length > 32) return null;
  const s = input.toUpperCase().replace(/[\s-]/g, '');
  if (s.length !== USER_CODE_LENGTH) return null;
  for (const ch of s) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return s;
}

export function formatUserCode(raw: string): string {
  return `${raw.slice(0, 4)}-${raw.slice(4)}`;
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** Starts a device authorization: an opaque device code and a short user code, both stored hashed. */
export async function createDeviceAuthorization(
  ctx: AppContext,
  client: Client,
  scopes: string[],
): Promise<DeviceAuthorization> {
  const now = ctx.clock.now();
  for (let attempt = 0; ; attempt++) {
    const deviceCode = newSecret();
    const raw = randomAlphanumeric(USER_CODE_LENGTH, USER_CODE_ALPHABET);
    const inserted = await ctx.stores.devices.insert({
      id: newId('dev_'),
      device_code_hash: sha256(deviceCode),
      user_code_hash: sha256(raw),
      client_id: client.clientId,
      scopes,
      status: 'pending',
      user_id: null,
      auth_time: null,
      poll_interval: defaults.devicePollInterval,
      last_polled_at: null,
      expires_at: new Date(now.getTime() + defaults.deviceCodeTtl * 1000),
      created_at: now,
      consumed_at: null,
      denial: null,
    });
    if (inserted)
      return {
        deviceCode,
        userCode: formatUserCode(raw),
        expiresIn: defaults.deviceCodeTtl,
        interval: defaults.devicePollInterval,
      };
    // A user-code collision with a live authorization: draw again.
    if (attempt >= 5) throw new Error('could not draw a free user code');
  }
}

/** The pending, unexpired authorization a user code names (for the /device page), or null. */
export async function findPendingDevice(
  ctx: AppContext,
  userCode: string,
): Promise<{ id: string; clientId: string; scopes: string[]; expiresAt: Date } | null> {
  const raw = normalizeUserCode(userCode);
  if (!raw) return null;
  const row = await ctx.stores.devices.findPending(sha256(raw), ctx.clock.now());
  return row ? { id: row.id, clientId: row.client_id, scopes: row.scopes, expiresAt: row.expires_at } : null;
}

/**
 * Records the user's decision on a pending, unexpired authorization (approve for `user`, or deny);
 * false when there is none.
 */
export async function decideDevice(
  ctx: AppContext,
  userCode: string,
  decision: { approve: true; userId: string; authTime: number } | { approve: false; denial?: 'requirement' },
): Promise<boolean> {
  const raw = normalizeUserCode(userCode);
  if (!raw) return false;
  return ctx.stores.devices.decide(
    sha256(raw),
    ctx.clock.now(),
    decision.approve
      ? { status: 'approved', userId: decision.userId, authTime: decision.authTime }
      : { status: 'denied', denial: decision.denial },
  );
}

/** Approves a pending, unexpired authorization for `userId`; false when there is none. */
export function approveDevice(ctx: AppContext, userCode: string, userId: string, authTime: number) {
  return decideDevice(ctx, userCode, { approve: true, userId, authTime });
}

/** Denies a pending, unexpired authorization; false when there is none. */
export function denyDevice(ctx: AppContext, userCode: string): Promise<boolean> {
  return decideDevice(ctx, userCode, { approve: false });
}

export type PollResult =
  | { kind: 'invalid' }
  | { kind: 'expired' }
  | { kind: 'slow_down' }
  | { kind: 'pending' }
  | { kind: 'denied'; denial: 'requirement' | null }
  | { kind: 'approved'; row: DeviceRow };

/**
 * One poll of a device code by `clientId`. Polling faster than the code's interval answers
 * `slow_down` and adds 5 s to that code's interval (kept in the row); an approved code yields its
 * row exactly once (consumed atomically), later polls are `invalid`. `beforeConsume` runs on an
 * approved row before it is consumed: when it throws (a failed check, an unreachable RPC), nothing
 * is consumed and the device may poll again.
 */
export async function pollDevice(
  ctx: AppContext,
  deviceCode: string,
  clientId: string,
  beforeConsume?: (row: DeviceRow) => Promise<void>,
): Promise<PollResult> {
  const now = ctx.clock.now();
  const devices = ctx.stores.devices;
  const row = await devices.findByDeviceCode(sha256(deviceCode));
  if (!row || row.client_id !== clientId || row.consumed_at) return { kind: 'invalid' };
  if (row.expires_at.getTime() <= now.getTime()) return { kind: 'expired' };
  // Pace first: a poll is on time when the code's interval has passed since the previous poll.
  if (!(await devices.pollOnTime(row.id, now))) {
    await devices.slowDown(row.id, now, defaults.slowDownIncrement);
    return { kind: 'slow_down' };
  }
  if (row.status === 'pending') return { kind: 'pending' };
  if (row.status === 'denied') return { kind: 'denied', denial: row.denial ?? null };
  if (beforeConsume) await beforeConsume(row);
  const consumed = await devices.consumeApproved(row.id, now);
  return consumed ? { kind: 'approved', row: consumed } : { kind: 'invalid' };
}
