import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import { recordMutation } from '../../events/outbox.js';
import { forbidden, notFound, unprocessable } from '../../http/errors.js';
import { presentUsers } from '../users/user.presenter.js';
import { findUserById } from '../users/users.queries.js';
import * as q from './orgs.queries.js';
import type { MemberView } from './orgs.schemas.js';
import { type Actor, assertHolds } from './roles.service.js';

async function presentMembers(ctx: AppContext, db: Executor, orgId: string, rows: q.MemberRow[]) {
  const users = await presentUsers(
    db,
    ctx.config,
    rows.map((r) => r.user),
  );
  const roles = await q.rolesOfMembers(
    db,
    orgId,
    rows.map((r) => r.user.id),
  );
  return rows.map(
    (r, i): MemberView => ({
      userId: r.user.id,
      user: users[i],
      roles: (roles.get(r.user.id) ?? []).map((role) => ({ id: role.id, name: role.name })),
      joinedAt: r.joinedAt.toISOString(),
    }),
  );
}

async function memberItem(ctx: AppContext, db: Executor, orgId: string, userId: string): Promise<MemberView> {
  const { rows } = await q.listMembers(db, orgId, { limit: 1, offset: 0, userId });
  if (rows.length === 0) throw notFound('member');
  return (await presentMembers(ctx, db, orgId, rows))[0];
}

export async function listMembers(
  ctx: AppContext,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: MemberView[]; total: number }> {
  const { rows, total } = await q.listMembers(ctx.db, orgId, page);
  return { items: await presentMembers(ctx, ctx.db, orgId, rows), total };
}

const OWNER_VIA_TRANSFER = 'the Owner role changes hands only through transfer-ownership';

/**
 * Gives a member a role (member.role.changed); a role already held changes nothing (idempotent). A
 * user who is not a member is 404, except on the admin mirror, where they join with it (member.added).
 */
export async function assignRole(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  userId: string,
  roleId: string,
): Promise<MemberView> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await q.lockActiveOrg(trx, orgId))) throw notFound('organization');
    // A share lock: a concurrent delete of the role waits and then fails on the foreign key.
    const role = await q.findRole(trx, orgId, roleId, 'share');
    if (!role) throw notFound('role');
    assertHolds(actor, role.permissions);
    if (role.built_in === 'owner') throw unprocessable(OWNER_VIA_TRANSFER);
    const user = await findUserById(trx, userId);
    if (!user) throw notFound('user');
    // People join an org by accepting an invitation. Adding anyone by id would let any signed-in
    // user (every org creator holds org.members.edit) pull a stranger into an org and read their
    // profile and wallets from the member list, past the consent of every app they signed in to.
    // Only the admin mirror adds directly.
    if (!actor.admin && !(await q.lockMembership(trx, orgId, userId))) throw notFound('member');
    const now = ctx.clock.now();
    const joined = await q.insertMembership(trx, orgId, userId, now);
    const assigned = await q.insertMemberRole(trx, orgId, userId, role.id, now);
    if (joined) {
      await recordMutation(trx, ctx.clock, {
        orgId,
        actorUserId: actor.userId,
        action: 'member.added',
        resourceType: 'member',
        resourceId: userId,
        metadata: { roles: [role.name], roleIds: [role.id] },
        events: [{ type: 'member.added', data: { user: userId, roles: [role.name] } }],
      });
    } else if (assigned) {
      await recordMutation(trx, ctx.clock, {
        orgId,
        actorUserId: actor.userId,
        action: 'member.role.added',
        resourceType: 'member',
        resourceId: userId,
        metadata: { roleId: role.id, role: role.name },
        events: [{ type: 'member.role.changed', data: { user: userId, added: [role.name], removed: [] } }],
      });
    }
    return memberItem(ctx, trx, orgId, userId);
  });
}

/** Takes a role from a member. The last role, and the Owner role, cannot be taken (422). */
export async function removeRole(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  userId: string,
  roleId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await q.lockActiveOrg(trx, orgId))) throw notFound('organization');
    if (!(await q.lockMembership(trx, orgId, userId))) throw notFound('member');
    const held = (await q.rolesOfMembers(trx, orgId, [userId])).get(userId) ?? [];
    const role = held.find((r) => r.id === roleId);
    if (!role) throw notFound('role assignment');
    assertHolds(actor, role.permissions);
    if (role.built_in === 'owner') throw unprocessable(OWNER_VIA_TRANSFER);
    if (held.length <= 1)
      throw unprocessable('the last role of a member cannot be removed; remove the member');
    await q.deleteMemberRole(trx, orgId, userId, role.id);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'member.role.removed',
      resourceType: 'member',
      resourceId: userId,
      metadata: { roleId: role.id, role: role.name },
      events: [{ type: 'member.role.changed', data: { user: userId, added: [], removed: [role.name] } }],
    });
  });
}

/**
 * Removes a member (their role assignments go with them). The Owner cannot be removed, and nobody
 * removes a member whose roles carry a permission they do not hold themselves.
 */
export async function removeMember(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  userId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await q.lockActiveOrg(trx, orgId))) throw notFound('organization');
    if (!(await q.lockMembership(trx, orgId, userId))) throw notFound('member');
    const held = (await q.rolesOfMembers(trx, orgId, [userId])).get(userId) ?? [];
    if (held.some((r) => r.built_in === 'owner'))
      throw unprocessable('the Owner cannot be removed; transfer ownership first');
    assertHolds(
      actor,
      held.flatMap((r) => r.permissions),
    );
    await q.deleteMembership(trx, orgId, userId);
    const removedRoles = held.map((r) => r.name);
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'member.removed',
      resourceType: 'member',
      resourceId: userId,
      metadata: { removedRoles, removedRoleIds: held.map((r) => r.id) },
      events: [{ type: 'member.removed', data: { user: userId, removedRoles } }],
    });
  });
}

/**
 * Makes `newOwnerUserId` (an active member) the Owner; the previous Owner keeps Admin. The org row is
 * locked first and the caller's right to transfer is read again after the lock, so of two concurrent
 * transfers the second finds its caller no longer Owner: exactly one Owner remains.
 */
export async function transferOwnership(
  ctx: AppContext,
  orgId: string,
  actor: Actor,
  newOwnerUserId: string,
): Promise<MemberView> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await q.lockActiveOrg(trx, orgId))) throw notFound('organization');
    if (!actor.admin) {
      const perms = await q.permissionsInTx(trx, orgId, actor.userId);
      if (!perms) throw notFound('organization');
      if (!perms.has('org.ownership.transfer')) throw forbidden('org.ownership.transfer');
      // "Owner only": the permission through a custom role does not make its holder the Owner.
      if (!(await q.isOwner(trx, orgId, actor.userId)))
        throw forbidden('org.ownership.transfer', 'only the Owner can transfer ownership');
    }
    if (!(await q.lockMembership(trx, orgId, newOwnerUserId))) throw notFound('member');
    const owner = await q.findBuiltInRole(trx, orgId, 'owner');
    const admin = await q.findBuiltInRole(trx, orgId, 'admin');
    const previous = await q.holdersOfRole(trx, orgId, owner.id);
    if (previous.includes(newOwnerUserId)) throw unprocessable('this member is already the Owner');
    const now = ctx.clock.now();
    const events: Array<{ type: 'member.role.changed'; data: Record<string, unknown> }> = [];
    for (const userId of previous) {
      await q.deleteMemberRole(trx, orgId, userId, owner.id);
      const gainedAdmin = await q.insertMemberRole(trx, orgId, userId, admin.id, now);
      events.push({
        type: 'member.role.changed',
        data: { user: userId, added: gainedAdmin ? [admin.name] : [], removed: [owner.name] },
      });
    }
    await q.insertMemberRole(trx, orgId, newOwnerUserId, owner.id, now);
    events.push({
      type: 'member.role.changed',
      data: { user: newOwnerUserId, added: [owner.name], removed: [] },
    });
    await recordMutation(trx, ctx.clock, {
      orgId,
      actorUserId: actor.userId,
      action: 'org.ownership.transferred',
      resourceType: 'org',
      resourceId: orgId,
      metadata: { from: previous, to: newOwnerUserId },
      events,
    });
    return memberItem(ctx, trx, orgId, newOwnerUserId);
  });
}
