import type { Selectable } from 'kysely';
import type { Executor, OrgInvitationsTable } from '../../db/schema.js';

export type InvitationRow = Selectable<OrgInvitationsTable>;

export async function insertInvitation(db: Executor, row: InvitationRow): Promise<void> {
  await db.insertInto('org_invitations').values(row).execute();
}

export async function listInvitations(db: Executor, orgId: string): Promise<InvitationRow[]> {
  return db
    .selectFrom('org_invitations')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findInvitation(
  db: Executor,
  orgId: string,
  id: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('org_invitations')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The invitation a token names, locked for the accepting transaction. */
export async function lockInvitationByTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('org_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
}

/** Revokes a pending invitation; undefined when it was not pending (accepted or revoked already). */
export async function revokeInvitation(db: Executor, orgId: string, id: string, now: Date) {
  return db
    .updateTable('org_invitations')
    .set({ revoked_at: now })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** Consumes the invitation once: only one accepting request gets the row back. */
export async function consumeInvitation(db: Executor, id: string, userId: string, now: Date) {
  return db
    .updateTable('org_invitations')
    .set({ accepted_at: now, accepted_by: userId })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
}
