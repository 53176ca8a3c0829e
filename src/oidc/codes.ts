import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { sha256 } from '../lib/hash.js';
import { newId, newSecret } from '../lib/ids.js';
import type { Client } from './clients.js';

import type { AuthorizationCodeRow } from './stores.js';

export type { AuthorizationCodeRow };

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
  const { code, row } = newAuthorizationCode(ctx, input);
  await ctx.stores.codes.insert(row);
  return code;
}

/** A fresh code and the row that keeps its hash, for the caller to insert (in its transaction). */
export function newAuthorizationCode(
  ctx: AppContext,
  input: IssueCodeInput,
): { code: string; row: AuthorizationCodeRow } {
  const { code, row } = newUserlessCode(ctx, input);
  return { code, row: { ...row, user_id: input.userId } };
}

/** A code whose user the statement that finds the user fills in (a wallet's one-statement sign-in). */
export type UserlessCodeRow = Omit<AuthorizationCodeRow, 'user_id'>;

export function newUserlessCode(
  ctx: AppContext,
  input: Omit<IssueCodeInput, 'userId'>,
): { code: string; row: UserlessCodeRow } {
  const code = newSecret();
  const now = ctx.clock.now();
  const row: UserlessCodeRow = {
    code_hash: sha256(code),
    family_id: newId('fam_'),
    client_id: input.client.clientId,
    redirect_uri: input.redirectUri,
    scopes: input.scopes,
    nonce: input.nonce ?? null,
    code_challenge: input.codeChallenge ?? null,
    auth_time: input.authTime,
    session_id: input.sessionId ?? null,
    expires_at: new Date(now.getTime() + defaults.authorizationCodeTtl * 1000),
    created_at: now,
    consumed_at: null,
  };
  return { code, row };
}
