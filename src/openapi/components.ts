import * as http from '../http/schemas.js';
import * as apiKeys from '../modules/api-keys/api-keys.schemas.js';
import * as apps from '../modules/apps/apps.schemas.js';
import * as brands from '../modules/brands/brands.schemas.js';
import * as connections from '../modules/connections/connections.schemas.js';
import * as orgs from '../modules/orgs/orgs.schemas.js';
import * as scopes from '../modules/scopes/scopes.schemas.js';
import * as gatePolicies from '../modules/token-gates/gate-policies.schemas.js';
import * as tokenGates from '../modules/token-gates/token-gates.schemas.js';
import * as users from '../modules/users/users.schemas.js';
import * as webhooks from '../modules/webhooks/webhooks.schemas.js';

/** The two error envelopes, named as the document names them. */
export const ERROR_COMPONENTS = {
  ErrorEnvelope: http.ErrorEnvelope,
  OAuthError: http.OAuthErrorBody,
} as const;

/** Every module's schemas file: each exported object schema becomes a named component. */
const MODULE_SCHEMAS: Record<string, unknown>[] = [
  apiKeys,
  apps,
  brands,
  connections,
  orgs,
  scopes,
  tokenGates,
  gatePolicies,
  users,
  webhooks,
];

function isObjectSchema(v: unknown): boolean {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const s = v as { type?: unknown; anyOf?: unknown[] };
  if (s.type === 'object') return true;
  return Array.isArray(s.anyOf) && s.anyOf.some(isObjectSchema);
}

let cached: Map<object, string> | undefined;

/**
 * Schema object → component name. Exports named `…Params` and `…Query` become parameters instead,
 * and a `Schema` suffix is dropped (`OrgSchema` → `Org`). Routes refer to the same objects, so the
 * document finds a component by identity. Built once per process.
 */
export function componentNames(): Map<object, string> {
  if (cached) return cached;
  const names = new Map<object, string>();
  const taken = new Map<string, object>();
  const add = (name: string, schema: object) => {
    if (names.has(schema)) return;
    const other = taken.get(name);
    if (other && other !== schema) throw new Error(`two schemas export the component name ${name}`);
    taken.set(name, schema);
    names.set(schema, name);
  };
  for (const [name, schema] of Object.entries(ERROR_COMPONENTS)) add(name, schema);
  add('FileTracker', http.FileTracker);
  for (const mod of MODULE_SCHEMAS)
    for (const [exported, value] of Object.entries(mod)) {
      if (!/^[A-Z][a-z]/.test(exported) || /(Params|Query)$/.test(exported) || !isObjectSchema(value))
        continue;
      add(exported.replace(/Schema$/, ''), value as object);
    }
  cached = names;
  return names;
}
