import { sql } from 'kysely';
import type { AppContext } from '../../../context.js';
import type { Executor } from '../../../db/schema.js';
import type { InteractionParams, InteractionRow } from '../../../db/schema.js';

/** Whether a table of another module's migration exists yet (answer cached per context). */
const tableCache = new WeakMap<AppContext, Map<string, Promise<boolean>>>();
export function tableExists(ctx: AppContext, name: 'brand_scopes'): Promise<boolean> {
  let m = tableCache.get(ctx);
  if (!m) {
    m = new Map();
    tableCache.set(ctx, m);
  }
  let p = m.get(name);
  if (!p) {
    p = sql<{ t: string | null }>`select to_regclass(${name})::text as t`
      .execute(ctx.db)
      .then((r) => !!r.rows[0]?.t);
    m.set(name, p);
  }
  return p;
}

export interface BrandPresentation {
  id: string;
  orgId: string;
  slug: string;
  name: string;
  logoFileId: string | null;
  primaryColor: string | null;
  privacyPolicyUrl: string | null;
  termsUrl: string | null;
  providerOrder: string[];
}

export async function findBrand(db: Executor, brandId: string): Promise<BrandPresentation | null> {
  const row = await db
    .selectFrom('brands')
    .select([
      'id',
      'org_id as orgId',
      'slug',
      'name',
      'logo_file_id as logoFileId',
      'primary_color as primaryColor',
      'privacy_policy_url as privacyPolicyUrl',
      'terms_url as termsUrl',
      'provider_order as providerOrder',
    ])
    .where('id', '=', brandId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** The brand's own scope vocabulary, by name. */
export async function brandScopeDescriptions(ctx: AppContext, brandId: string): Promise<Map<string, string>> {
  if (!(await tableExists(ctx, 'brand_scopes'))) return new Map();
  const r = await sql<{
    name: string;
    description: string;
  }>`select name, description from brand_scopes where brand_id = ${brandId}`.execute(ctx.db);
  return new Map(r.rows.map((x) => [x.name, x.description]));
}

export async function insertInteraction(
  db: Executor,
  row: Omit<InteractionRow, 'params'> & { params: InteractionParams },
): Promise<void> {
  await db
    .insertInto('interactions')
    .values({ ...row, params: JSON.stringify(row.params) })
    .execute();
}

/** A live interaction: not expired, not completed. */
export async function findLiveInteraction(
  db: Executor,
  id: string,
  now: Date,
): Promise<InteractionRow | null> {
  const row = await db
    .selectFrom('interactions')
    .selectAll()
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .where('completed_at', 'is', null)
    .executeTakeFirst();
  return row ?? null;
}

/** Marks the interaction complete, once: the caller that gets `true` issues the code. */
export async function completeInteraction(db: Executor, id: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('interactions')
    .set({ completed_at: now })
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

export async function attachUser(
  db: Executor,
  id: string,
  fields: { userId: string; sessionId: string; authTime: Date },
): Promise<void> {
  await db
    .updateTable('interactions')
    .set({ user_id: fields.userId, session_id: fields.sessionId, auth_time: fields.authTime })
    .where('id', '=', id)
    .execute();
}

/** The live account that holds this wallet, if any. */
export async function findWalletOwner(db: Executor, address: string): Promise<string | null> {
  const row = await db
    .selectFrom('user_public_keys')
    .innerJoin('users', 'users.id', 'user_public_keys.user_id')
    .select('users.id')
    .where('user_public_keys.blockchain', '=', 'solana')
    .where('user_public_keys.address', '=', address)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Links the wallet to the user as its primary key when the user has none. Returns false when
 * another account holds the wallet (a concurrent first sign-in with the same wallet won).
 */
export async function insertPrimaryWallet(
  db: Executor,
  input: { id: string; userId: string; address: string; now: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('user_public_keys')
    .values({
      id: input.id,
      user_id: input.userId,
      blockchain: 'solana',
      address: input.address,
      label: null,
      is_primary: true,
      last_used_at: input.now,
      created_at: input.now,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

export async function touchWallet(db: Executor, address: string, now: Date): Promise<void> {
  await db
    .updateTable('user_public_keys')
    .set({ last_used_at: now })
    .where('blockchain', '=', 'solana')
    .where('address', '=', address)
    .execute();
}

export async function deleteExpiredInteractions(db: Executor, now: Date): Promise<number> {
  const res = await db.deleteFrom('interactions').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
