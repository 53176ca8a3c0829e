import type { Executor } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { activityInsert } from './users.queries.js';

export const ACTIVITY_TYPES = [
  'sign_in',
  'sign_in_failed',
  'link_provider',
  'unlink_provider',
  'device_authorized',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

export interface ActivityInput {
  userId: string;
  type: ActivityType;
  /** The sign-in method: a connection type or `solana`. */
  provider?: string;
  ip?: string;
  userAgent?: string;
}

/** Longest user agent kept; browsers send far less, anything longer is noise or abuse. */
const USER_AGENT_MAX = 512;

/**
 * Appends one event to a user's sign-in history (`GET /users/me/activity` shows the last five).
 * Call it in the transaction of the change it describes, or with the pool for a failed sign-in.
 */
export async function recordActivity(db: Executor, clock: Clock, input: ActivityInput): Promise<void> {
  await recordActivityQuery(db, clock, input).execute();
}

/** recordActivity's insert, unexecuted: for a statement that writes the sign-in with it. */
export function recordActivityQuery(db: Executor, clock: Clock, input: ActivityInput) {
  return activityInsert(db, { ...activityRow(clock, input), user_id: input.userId });
}

/** A history row but its user (a statement that finds the user as it signs in adds it). */
export function activityRow(clock: Clock, input: Omit<ActivityInput, 'userId'>) {
  return {
    id: newId('act_'),
    type: input.type,
    provider: input.provider ?? null,
    ip: input.ip ?? null,
    user_agent: input.userAgent ? input.userAgent.slice(0, USER_AGENT_MAX) : null,
    created_at: clock.now(),
  };
}
