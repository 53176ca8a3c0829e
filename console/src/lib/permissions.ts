/** A role as the API returns it. */
export interface RoleLike {
  id: string;
  name: string;
  isBuiltIn: boolean;
  permissions: string[];
}

/** The permissions a member holds: the union of their roles' permissions (membership implies `org.read`). */
export function permissionsOf(roleIds: string[], roles: RoleLike[]): Set<string> {
  const held = new Set<string>(['org.read']);
  for (const role of roles) if (roleIds.includes(role.id)) for (const p of role.permissions) held.add(p);
  return held;
}

/**
 * Every org permission, grouped by resource (`org.members.edit` → `members`; `org.read` → `org`),
 * taken from the permission data the API returns (the built-in Owner role holds them all).
 */
export function groupPermissions(all: string[]): { resource: string; permissions: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const p of [...new Set(all)].sort()) {
    const parts = p.split('.');
    const resource = parts.length > 2 ? parts[1] : parts[0];
    const list = groups.get(resource) ?? [];
    list.push(p);
    groups.set(resource, list);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a === 'org' ? -1 : b === 'org' ? 1 : a.localeCompare(b)))
    .map(([resource, permissions]) => ({ resource, permissions }));
}

/** The complete permission vocabulary: the union of every role's permissions (the Owner's covers all). */
export function allPermissions(roles: RoleLike[]): string[] {
  return [...new Set(roles.flatMap((r) => r.permissions))].sort();
}
