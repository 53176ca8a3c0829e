/** The interface's event catalog. `token.*` are high-volume and excluded from the `*` subscription. */
export const EVENT_TYPES = [
  'consent.granted',
  'consent.revoked',
  'member.added',
  'member.invited',
  'member.invitation.revoked',
  'member.removed',
  'member.role.changed',
  'oidcClient.created',
  'oidcClient.updated',
  'oidcClient.deleted',
  'oidcClient.secret.rotated',
  'socialProvider.upserted',
  'socialProvider.enabled',
  'socialProvider.disabled',
  'tokenGate.created',
  'tokenGate.updated',
  'tokenGate.deleted',
  'webhook.test',
  'token.issued',
  'token.refreshed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const HIGH_VOLUME_EVENTS: readonly EventType[] = ['token.issued', 'token.refreshed'];

/** Whether a subscription's `events` list receives `type`. */
export function subscribes(events: readonly string[], type: string): boolean {
  if (events.includes(type)) return true;
  return events.includes('*') && !(HIGH_VOLUME_EVENTS as readonly string[]).includes(type);
}
