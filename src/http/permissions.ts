import type { OrgRow } from '../db/schema.js';
import { keyMeets } from './key-scopes.js';

/** Every org permission. `org.read` is implied by membership. */
export const ORG_PERMISSIONS = [
  'org.read',
  'org.edit',
  'org.delete',
  'org.ownership.transfer',
  'org.members.view',
  'org.members.edit',
  'org.brands.view',
  'org.brands.edit',
  'org.apps.view',
  'org.apps.edit',
  'org.connections.view',
  'org.connections.edit',
  'org.scopes.edit',
  'org.tokenGates.view',
  'org.tokenGates.edit',
  'org.webhooks.view',
  'org.webhooks.edit',
] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

/** System permissions, granted with `gatehouse admin grant`. */
export const ADMIN_PERMISSIONS = ['admin.orgs.view', 'admin.orgs.edit', 'admin.users.view'] as const;
export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];

/** The built-in roles, as data (DESIGN.md §4). */
export const BUILT_IN_ROLES: Record<
  'owner' | 'admin' | 'member',
  { name: string; permissions: OrgPermission[] }
> = {
  owner: { name: 'Owner', permissions: [...ORG_PERMISSIONS] },
  admin: {
    name: 'Admin',
    permissions: ORG_PERMISSIONS.filter((p) => p !== 'org.delete' && p !== 'org.ownership.transfer'),
  },
  member: {
    name: 'Member',
    permissions: ORG_PERMISSIONS.filter((p) => p === 'org.read' || p.endsWith('.view')),
  },
};

function pascalToDotted(name: string): string {
  return (
    name.charAt(0).toLowerCase() +
    name
      .slice(1)
      .replace(/(Edit|View|Delete|Transfer)$/, '.$1')
      .replace(/\.(\w)/, (_, c: string) => `.${c.toLowerCase()}`)
  );
}

/**
 * Accepts both forms: `org.members.view` and `IdentityOrgPermission.MembersView`;
 * `admin.orgs.view` and `AdminPermission.OrgsView`. Returns the dotted form or null.
 */
export function normalizePermission(name: string): string | null {
  if ((ORG_PERMISSIONS as readonly string[]).includes(name)) return name;
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(name)) return name;
  let m = /^IdentityOrgPermission\.([A-Z][A-Za-z]*)$/.exec(name);
  if (m) {
    const special: Record<string, string> = {
      Read: 'org.read',
      Edit: 'org.edit',
      Delete: 'org.delete',
      OwnershipTransfer: 'org.ownership.transfer',
    };
    const dotted = special[m[1]] ?? `org.${pascalToDotted(m[1])}`;
    return (ORG_PERMISSIONS as readonly string[]).includes(dotted) ? dotted : null;
  }
  m = /^AdminPermission\.([A-Z][A-Za-z]*)$/.exec(name);
  if (m) {
    const dotted = `admin.${pascalToDotted(m[1])}`;
    return (ADMIN_PERMISSIONS as readonly string[]).includes(dotted) ? dotted : null;
  }
  return null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The org of an org-scoped route, after the guard ran. */
    org: OrgRow;
    /** The caller's permissions in `org` (every permission on admin mirror routes). */
    orgPermissions: Set<string>;
  }
}

/** An API key with no scopes has the user's full access; otherwise one of its scopes must name the permission. */
export function apiKeyAllows(scopes: string[], permission: string): boolean {
  return keyMeets(scopes, [permission]);
}
