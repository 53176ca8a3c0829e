import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import type { Client } from './clients.js';
import type { GrantType } from './discovery.js';
import type { TokenResponse } from './tokens.js';

/** The form fields of POST /oauth2/token (all strings; a repeated field is refused by the schema). */
export interface TokenRequestBody {
  grant_type?: string;
  client_id?: string;
  client_secret?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  refresh_token?: string;
  scope?: string;
  device_code?: string;
  [field: string]: string | undefined;
}

export interface GrantRequest {
  ctx: AppContext;
  req: FastifyRequest;
  /** The authenticated client, already allowed to use this grant. */
  client: Client;
  body: TokenRequestBody;
}

/** One grant type: its name, whether a client id alone authenticates it, and its handler. */
export interface Grant {
  name: GrantType;
  /** Device polling: `client_id` only (a secret that is sent must still be right). */
  clientIdOnly?: boolean;
  handler(g: GrantRequest): Promise<TokenResponse>;
}

/** A required form field, or `invalid_request`. */
export function required(body: TokenRequestBody, field: string): string {
  const v = body[field];
  if (typeof v !== 'string' || v === '') throw new OAuthError('invalid_request', `${field} is required`);
  return v;
}

/** RFC 6749 §3.3 scope tokens, space separated; duplicates dropped, order kept. */
export function parseScope(scope: string | undefined): string[] {
  if (scope === undefined) return [];
  if (!/^[\x21\x23-\x5b\x5d-\x7e ]*$/.test(scope)) throw new OAuthError('invalid_scope', 'malformed scope');
  return [...new Set(scope.split(' ').filter(Boolean))];
}

export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
