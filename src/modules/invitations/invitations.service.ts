import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Trx } from '../../db/schema.js';
import { recordMutation } from '../../events/outbox.js';
import { conflict, notFound, unprocessable } from '../../http/errors.js';
import { sha256 } from '../../lib/hash.js';
import { newId, newSecret } from '../../lib/ids.js';
import * as orgs from '../orgs/orgs.queries.js';
import { systemPermissionsOf } from '../orgs/system-permissions.queries.js';
import { type Actor, assertHolds } from '../orgs/roles.service.js';
import * as q from './invitations.queries.js';
import type { CreateInvitationInput, InvitationView } from './invitations.schemas.js';

/** The token's visible marker, so a leaked link is recognisable. */
const TOKEN_PREFIX = 'ghinv_';

/** Where the invitee opens the link: the console, with the token in the fragment (never sent to a server). */
export function invitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/console/invitations/accept#token=${encodeURIComponent(token)}`;
}

function statusOf(row: q.InvitationRow, now: Date): InvitationView['status'] {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  if (row.expires_at <= now) return 'expired';
  return 'pending';
}

/**
 * Creates a single-use invitation link giving `roleIds`. The roles must be this org's; the caller
 * must hold every permission they give (as when assigning a role); the Owner role changes hands
 * only through transfer-ownership.
 */
export async function createInvitation(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  input: CreateInvitationInput,
): Promise<{ id: string; url: string; expiresAt: string }> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await orgs.lockActiveOrg(trx, orgId))) throw notFound('organization');
    const roles = [];
    for (const roleId of input.roleIds) {
      const role = await orgs.findRole(trx, orgId, roleId, 'share');
      if (!role) throw notFound('role');
      if (role.built_in === 'owner')
        throw unprocessable('the Owner role changes hands only through transfer-ownership', { roleId });
      roles.push(role);
    }
    assertHolds(
      actor,
      roles.flatMap((r) => r.permissions),
    );
    const now = ctx.clock.now();
    const expiresAt = new Date(
      now.getTime() + (input.expiresInDays ?? defaults.invitationDefaultDays) * 86_400_000,
    );
    const token = newSecret(TOKEN_PREFIX);
    const id = newId('inv_');
    await q.insertInvitation(trx, {
      id,
      org_id: orgId,
      token_hash: sha256(token),
      role_ids: roles.map((r) => r.id),
      created_by: actor.userId,
      created_at: now,
      expires_at: expiresAt,
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    });
    const names = roles.map((r) => r.name);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'member.invited',
      resourceType: 'invitation',
      resourceId: id,
      metadata: { roles: names, roleIds: roles.map((r) => r.id), expiresAt: expiresAt.toISOString() },
      events: [
        {
          type: 'member.invited',
          data: { invitation: id, roles: names, expiresAt: expiresAt.toISOString() },
        },
      ],
    });
    return { id, url: invitationUrl(ctx.config.baseUrl, token), expiresAt: expiresAt.toISOString() };
  });
}

export async function listInvitations(
  ctx: AppContext,
  orgId: string,
  filter: { status?: InvitationView['status'] },
): Promise<{ items: InvitationView[]; total: number }> {
  const [rows, roles] = await Promise.all([q.listInvitations(ctx.db, orgId), orgs.listRoles(ctx.db, orgId)]);
  const names = new Map(roles.map((r) => [r.id, r.name]));
  const now = ctx.clock.now();
  const items = rows
    .map(
      (r): InvitationView => ({
        id: r.id,
        roles: r.role_ids.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! })),
        status: statusOf(r, now),
        createdBy: r.created_by,
        createdAt: r.created_at.toISOString(),
        expiresAt: r.expires_at.toISOString(),
        ...(r.accepted_by ? { acceptedBy: r.accepted_by } : {}),
      }),
    )
    .filter((i) => !filter.status || i.status === filter.status);
  return { items, total: items.length };
}

/**
 * Revokes a pending invitation; revoking one that is no longer pending changes nothing. As with a
 * member's roles, only someone who could have given its roles may take the link back (403 naming
 * what the caller lacks): a custom role with `org.members.edit` alone cannot cancel an Owner's
 * Admin links.
 */
export async function revokeInvitation(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  id: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const row = await q.findInvitation(trx, orgId, id);
    if (!row) throw notFound('invitation');
    if (row.accepted_at) throw unprocessable('the invitation was already accepted');
    const roles = await Promise.all(row.role_ids.map((roleId) => orgs.findRole(trx, orgId, roleId, 'share')));
    assertHolds(
      actor,
      roles.flatMap((r) => r?.permissions ?? []),
    );
    if (!(await q.revokeInvitation(trx, orgId, id, ctx.clock.now()))) return;
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'member.invitation.revoked',
      resourceType: 'invitation',
      resourceId: id,
      events: [{ type: 'member.invitation.revoked', data: { invitation: id } }],
    });
  });
}

/**
 * A link carries its creator's authority, so it stands only while the creator could still make it:
 * a member of the org who may invite (`org.members.edit`) and holds every permission its roles give
 * now, or a system administrator (the admin mirror). Otherwise removing or demoting an admin would
 * not stick: the links they made beforehand would let them, or anyone they hand them to, back in
 * with their old roles.
 */
async function creatorCouldStillInvite(
  trx: Trx,
  orgId: string,
  creatorId: string,
  roles: Array<{ permissions: string[] }>,
): Promise<boolean> {
  const held = await orgs.permissionsInTx(trx, orgId, creatorId);
  const gives = roles.flatMap((r) => r.permissions);
  if (held?.has('org.members.edit') && gives.every((p) => held.has(p))) return true;
  return (await systemPermissionsOf(trx, creatorId)).includes('admin.orgs.edit');
}

/**
 * The invitee accepts: the whole request is checked (the invitation is live, its org active, the
 * user not yet a member, its roles still there, its creator still able to give them) before the
 * invitation is consumed, once, and the user joins with its roles (`member.added`). A link whose
 * creator can no longer give its roles is 404, as a revoked one.
 */
export async function acceptInvitation(
  ctx: AppContext,
  userId: string,
  token: string,
): Promise<{ org: { id: string; slug: string; name: string }; roles: { id: string; name: string }[] }> {
  return ctx.db.transaction().execute(async (trx) => {
    const row = await q.lockInvitationByTokenHash(trx, sha256(token));
    if (!row || row.revoked_at) throw notFound('invitation');
    if (row.accepted_at) throw conflict('this invitation was already used');
    const now = ctx.clock.now();
    if (row.expires_at <= now) throw unprocessable('this invitation has expired');
    const org = await orgs.lockActiveOrg(trx, row.org_id);
    if (!org) throw notFound('invitation');
    if (await orgs.lockMembership(trx, org.id, userId))
      throw conflict('you are already a member of this organization');
    const roles = [];
    for (const roleId of row.role_ids) {
      const role = await orgs.findRole(trx, org.id, roleId, 'share');
      if (role) roles.push(role);
    }
    if (roles.length === 0) throw unprocessable('the roles of this invitation no longer exist');
    if (!(await creatorCouldStillInvite(trx, org.id, row.created_by, roles))) throw notFound('invitation');
    if (!(await q.consumeInvitation(trx, row.id, userId, now)))
      throw conflict('this invitation was already used');
    await orgs.insertMembership(trx, org.id, userId, now);
    for (const role of roles) await orgs.insertMemberRole(trx, org.id, userId, role.id, now);
    const names = roles.map((r) => r.name);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId: userId,
      action: 'member.added',
      resourceType: 'member',
      resourceId: userId,
      metadata: { roles: names, roleIds: roles.map((r) => r.id), invitation: row.id },
      events: [{ type: 'member.added', data: { user: userId, roles: names } }],
    });
    return {
      org: { id: org.id, slug: org.slug, name: org.name },
      roles: roles.map((r) => ({ id: r.id, name: r.name })),
    };
  });
}
