import { BUILT_IN_ROLES } from '../../http/permissions.js';
import { newId } from '../../lib/ids.js';

/** Rows for an org's built-in roles (Owner, Admin, Member). */
export function builtInRoleRows(orgId: string, now: Date) {
  return (Object.keys(BUILT_IN_ROLES) as Array<keyof typeof BUILT_IN_ROLES>).map((key) => ({
    id: newId('role_'),
    org_id: orgId,
    name: BUILT_IN_ROLES[key].name,
    description: null,
    built_in: key,
    permissions: [...BUILT_IN_ROLES[key].permissions],
    created_at: now,
    updated_at: now,
  }));
}
