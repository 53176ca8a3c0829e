import { BlockList, isIP } from 'node:net';
import { defaults } from '../../config/defaults.js';
import type { AppContext, Principal } from '../../context.js';
import { API_KEY_PREFIX } from '../../http/auth.js';
import { type FieldError, notFound, validationFailed } from '../../http/errors.js';
import { ADMIN_PERMISSIONS, normalizePermission, ORG_PERMISSIONS } from '../../http/permissions.js';
import { sha256 } from '../../lib/hash.js';
import { newId, newSecret } from '../../lib/ids.js';
import {
  type ApiKeyRow,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  touchApiKey,
} from './api-keys.queries.js';

/** Scopes for the `/users/*` routes: reading the caller's own records, and changing them. */
export const USER_SCOPES = ['users:read', 'users:write'] as const;

/**
 * What an API key's `scopes` may name: the user scopes, every org permission (the key then acts in
 * an org only within both its scopes and the user's role) and the system permissions. No scopes:
 * the key can do all its user can.
 */
export const API_KEY_SCOPES: readonly string[] = [...USER_SCOPES, ...ORG_PERMISSIONS, ...ADMIN_PERMISSIONS];

/** Length of the display prefix: `ghsk_` and three characters of the secret. */
const PREFIX_LENGTH = 8;

export interface CreateApiKeyInput {
  name: string;
  expiresAt?: string;
  scopes?: string[];
  type?: 'standard' | 'ephemeral';
  ipAllowlist?: string[];
}

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  type: 'standard' | 'ephemeral';
  scopes: string[];
  expiresAt?: string;
  ipAllowlist: string[];
  createdAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
}

export function presentApiKey(row: ApiKeyRow): ApiKeyView {
  const v: ApiKeyView = {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    type: row.type as ApiKeyView['type'],
    scopes: row.scopes,
    ipAllowlist: row.ip_allowlist,
    createdAt: row.created_at.toISOString(),
  };
  if (row.expires_at) v.expiresAt = row.expires_at.toISOString();
  if (row.last_used_at) v.lastUsedAt = row.last_used_at.toISOString();
  if (row.revoked_at) v.revokedAt = row.revoked_at.toISOString();
  return v;
}

/** `a.b.c.d/n` or `x::y/n` (a bare address means just that address); returns the canonical CIDR or null. */
export function parseCidr(
  value: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText, ...rest] = value.trim().split('/');
  if (rest.length > 0) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > max) return null;
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function normalizeScopes(scopes: string[], fields: FieldError[]): string[] {
  const out: string[] = [];
  scopes.forEach((s, i) => {
    const name = (USER_SCOPES as readonly string[]).includes(s) ? s : normalizePermission(s);
    if (!name) {
      fields.push({
        field: `scopes.${i}`,
        code: 'invalid_value',
        message: 'not a known scope: users:read, users:write, or an org or admin permission',
      });
    } else if (!out.includes(name)) out.push(name);
  });
  return out;
}

/** Creates a key; the plaintext is returned once, only its SHA-256 is stored. */
export async function createApiKey(
  ctx: AppContext,
  userId: string,
  input: CreateApiKeyInput,
): Promise<ApiKeyView & { key: string }> {
  const fields: FieldError[] = [];
  const now = ctx.clock.now();
  const type = input.type ?? 'standard';
  const name = input.name.trim();
  if (!name) fields.push({ field: 'name', code: 'too_short', message: 'must not be blank' });
  const scopes = normalizeScopes(input.scopes ?? [], fields);
  const ipAllowlist: string[] = [];
  (input.ipAllowlist ?? []).forEach((entry, i) => {
    const cidr = parseCidr(entry);
    if (!cidr) {
      fields.push({
        field: `ipAllowlist.${i}`,
        code: 'invalid_format',
        message: 'must be an IPv4 or IPv6 CIDR',
      });
      return;
    }
    const text = `${cidr.address}/${cidr.prefix}`;
    if (!ipAllowlist.includes(text)) ipAllowlist.push(text);
  });
  let expiresAt: Date | null = null;
  if (input.expiresAt !== undefined) {
    expiresAt = new Date(input.expiresAt);
    if (Number.isNaN(expiresAt.getTime()) || expiresAt <= now)
      fields.push({ field: 'expiresAt', code: 'out_of_range', message: 'must be in the future' });
  }
  const ephemeralMax = new Date(now.getTime() + defaults.apiKeyEphemeralTtl * 1000);
  if (type === 'ephemeral') {
    if (!expiresAt) expiresAt = ephemeralMax;
    else if (expiresAt > ephemeralMax)
      fields.push({
        field: 'expiresAt',
        code: 'out_of_range',
        message: `an ephemeral key lives at most ${defaults.apiKeyEphemeralTtl} seconds`,
      });
  }
  if (fields.length > 0) throw validationFailed(fields);

  const key = newSecret(API_KEY_PREFIX);
  const row = await insertApiKey(ctx.db, {
    id: newId('key_'),
    user_id: userId,
    name,
    prefix: key.slice(0, PREFIX_LENGTH),
    key_hash: sha256(key),
    type,
    scopes,
    ip_allowlist: ipAllowlist,
    expires_at: expiresAt,
    last_used_at: null,
    revoked_at: null,
    created_at: now,
  });
  const { lastUsedAt: _l, revokedAt: _r, ...view } = presentApiKey(row);
  return { ...view, key };
}

export async function listKeys(ctx: AppContext, userId: string): Promise<ApiKeyView[]> {
  return (await listApiKeys(ctx.db, userId)).map(presentApiKey);
}

/** Revokes one of the caller's keys (404 for anyone else's); the key is refused from the next request. */
export async function revokeKey(ctx: AppContext, userId: string, id: string): Promise<ApiKeyView> {
  const row = await revokeApiKey(ctx.db, userId, id, ctx.clock.now());
  if (!row) throw notFound('API key');
  return presentApiKey(row);
}

/** An IPv4-mapped IPv6 peer (`::ffff:1.2.3.4`) is matched as the IPv4 address. */
function ipAllowed(allowlist: string[], ip: string): boolean {
  if (allowlist.length === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const addr = mapped ? mapped[1] : ip;
  const version = isIP(addr);
  if (version === 0) return false;
  const list = new BlockList();
  for (const entry of allowlist) {
    const cidr = parseCidr(entry);
    if (cidr) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return list.check(addr, version === 4 ? 'ipv4' : 'ipv6');
}

/** A live key: known hash (the lookup by hash is the timing-safe comparison), not revoked, not expired. */
async function liveKey(ctx: AppContext, key: string): Promise<ApiKeyRow | null> {
  if (!key.startsWith(API_KEY_PREFIX)) return null;
  const row = await findApiKeyByHash(ctx.db, sha256(key));
  if (!row || row.revoked_at) return null;
  if (row.expires_at && row.expires_at <= ctx.clock.now()) return null;
  return row;
}

/**
 * `ctx.hooks.apiKeyVerifier`: the principal of a user API key presented from `ip`, or null for an
 * unknown, revoked or expired key or an address outside its allowlist.
 */
export async function verifyApiKey(ctx: AppContext, key: string, ip: string): Promise<Principal | null> {
  const row = await liveKey(ctx, key);
  if (!row || !ipAllowed(row.ip_allowlist, ip)) return null;
  await touchApiKey(ctx.db, row.id, ctx.clock.now());
  const principal: Principal = { kind: 'api_key', userId: row.user_id, scopes: row.scopes, apiKeyId: row.id };
  if (row.expires_at) principal.exp = Math.floor(row.expires_at.getTime() / 1000);
  return principal;
}

export interface ApiKeyIntrospection {
  active: true;
  scope: string;
  token_type: 'api_key';
  sub: string;
  exp?: number;
  iat: number;
  client_id?: string;
}

/**
 * For /oauth2/introspect (RFC 7662): the key's state as a resource server sees it. A key with an IP
 * allowlist is active only when the introspection itself comes from an allowed address (the key is
 * meant to be used from there alone). The issuer adds its own rule on top (the key's user must have
 * consented to the introspecting app). null means inactive.
 */
export async function introspectApiKey(
  ctx: AppContext,
  key: string,
  ip: string,
): Promise<ApiKeyIntrospection | null> {
  const row = await liveKey(ctx, key);
  if (!row || !ipAllowed(row.ip_allowlist, ip)) return null;
  const out: ApiKeyIntrospection = {
    active: true,
    scope: row.scopes.join(' '),
    token_type: 'api_key',
    sub: row.user_id,
    iat: Math.floor(row.created_at.getTime() / 1000),
  };
  if (row.expires_at) out.exp = Math.floor(row.expires_at.getTime() / 1000);
  return out;
}
