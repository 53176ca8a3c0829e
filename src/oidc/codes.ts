import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import type { Executor } from '../db/schema.js';
import { sha256 } from '../lib/hash.js';
import { newId, newSecret } from '../lib/ids.js';
import type { Client } from './clients.js';
import type { AuthorizationCodesTable } from '../db/schema.js';
import type { Selectable } from 'kysely';

export type AuthorizationCodeRow = Selectable<AuthorizationCodesTable>;

export interface IssueCodeInput {
  client: Client;
  userId: string;
  redirectUri: string;
  scopes: string[];
  nonce?: string;
  /** base64url SHA-256 of the verifier (only S256 exists). */
  codeChallenge?: string;
  /** When the user authenticated (unix seconds). */
  authTime: number;
  sessionId?: string;
}

/**
 * Issues an authorization code (60 s, single use). Only its SHA-256 is stored; the code itself
 * goes to the redirect and nowhere else. Each code starts a token family.
 */
export async function issueAuthorizationCode(ctx: AppContext, input: IssueCodeInput): Promise<string> {
  const code = newSecret();
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('authorization_codes')
    .values({
      code_hash: sha256(code),
      family_id: newId('fam_'),
      client_id: input.client.clientId,
      user_id: input.userId,
      redirect_uri: input.redirectUri,
      scopes: input.scopes,
      nonce: input.nonce ?? null,
      code_challenge: input.codeChallenge ?? null,
      auth_time: input.authTime,
      session_id: input.sessionId ?? null,
      expires_at: new Date(now.getTime() + defaults.authorizationCodeTtl * 1000),
      created_at: now,
      consumed_at: null,
    })
    .execute();
  return code;
}

/** A code by its value, consumed or not (the request is checked against it before consuming). */
export async function findAuthorizationCode(
  db: Executor,
  code: string,
): Promise<AuthorizationCodeRow | null> {
  const row = await db
    .selectFrom('authorization_codes')
    .selectAll()
    .where('code_hash', '=', sha256(code))
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Consumes a code atomically: the first caller gets the row, every later one gets null. The caller
 * checks the request (client, redirect URI, expiry) on `findAuthorizationCode`'s row first, so a
 * malformed request never burns a valid code; PKCE is checked after, on the consumed row.
 */
export async function consumeAuthorizationCode(
  db: Executor,
  now: Date,
  code: string,
): Promise<AuthorizationCodeRow | null> {
  const row = await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('code_hash', '=', sha256(code))
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}
