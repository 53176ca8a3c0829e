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
  'gatePolicy.created',
  'gatePolicy.updated',
  'gatePolicy.deleted',
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

/** What fires each event (the interface's catalog), for people choosing what to subscribe to. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'consent.granted': 'A user grants scopes to an app for the first time, or adds scopes to a grant.',
  'consent.revoked': 'A user or an app revokes a consent grant.',
  'member.added': 'A user joins the organization.',
  'member.invited': 'An invitation link to join the organization is created.',
  'member.invitation.revoked': 'A pending invitation is revoked.',
  'member.removed': 'A user leaves the organization or is removed.',
  'member.role.changed': 'A role is added to or removed from a member.',
  'oidcClient.created': 'An app is registered.',
  'oidcClient.updated': "An app's configuration changes.",
  'oidcClient.deleted': 'An app is disabled or deleted.',
  'oidcClient.secret.rotated': "An app's client secret is rotated (the secret is never sent).",
  'socialProvider.upserted': 'A sign-in connection is created or updated (its configuration is never sent).',
  'socialProvider.enabled': 'A sign-in connection is enabled.',
  'socialProvider.disabled': 'A sign-in connection is disabled.',
  'tokenGate.created': 'A token gate is created.',
  'tokenGate.updated': 'A token gate is updated.',
  'tokenGate.deleted': 'A token gate is deleted.',
  'gatePolicy.created': 'A gate policy is created.',
  'gatePolicy.updated': 'A gate policy is updated.',
  'gatePolicy.deleted': 'A gate policy is deleted.',
  'webhook.test': 'A test delivery is requested.',
  'token.issued': 'Every successful token issuance (high volume; never the token itself).',
  'token.refreshed': 'Every refresh-token exchange (high volume; never the token itself).',
};
