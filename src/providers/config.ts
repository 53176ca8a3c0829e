import type { AppContext } from '../context.js';
import type { ProviderEndpoints } from './provider.js';
import { PROVIDER_TYPES, type ProviderConfig, type ProviderType } from './types.js';
import { PROVIDERS } from './index.js';

const ENDPOINT_KEYS = [
  'authorizationUrl',
  'tokenUrl',
  'userinfoUrl',
  'revocationUrl',
  'issuer',
  'jwksUrl',
] as const;

/**
 * The provider's endpoints for a connection: the real ones with Microsoft's `{tenant}` filled in,
 * each replaced by its `PROVIDER_<TYPE>_*` override when one is configured (every brand alike).
 */
export function resolveEndpoints(
  ctx: AppContext,
  type: ProviderType,
  config?: ProviderConfig,
): { endpoints: ProviderEndpoints; overridden: Set<keyof ProviderEndpoints> } {
  const def = PROVIDERS[type];
  const base: Partial<ProviderEndpoints> = def.kind === 'oauth' ? { ...def.endpoints } : {};
  const tenant = (config as { tenant?: string } | undefined)?.tenant || 'common';
  const overrides = ctx.config.providers[type] ?? {};
  const overridden = new Set<keyof ProviderEndpoints>();
  const out: Partial<ProviderEndpoints> = {};
  for (const k of ENDPOINT_KEYS) {
    const o = overrides[k];
    if (o) {
      out[k] = o;
      overridden.add(k);
    } else if (base[k]) out[k] = base[k]!.replace('{tenant}', encodeURIComponent(tenant));
  }
  return { endpoints: out as ProviderEndpoints, overridden };
}

const REQUIRED_DEFAULTS: Record<ProviderType, string[]> = {
  google: ['clientId', 'clientSecret'],
  microsoft: ['clientId', 'clientSecret'],
  discord: ['clientId', 'clientSecret'],
  facebook: ['clientId', 'clientSecret'],
  x: ['clientId', 'clientSecret'],
  matrica: ['clientId', 'clientSecret'],
  apple: ['clientId', 'teamId', 'keyId', 'privateKey'],
  telegram: ['botToken', 'botUsername'],
};
const OPTIONAL_DEFAULTS: Partial<Record<ProviderType, string[]>> = { microsoft: ['tenant'] };

/** The operator's credentials for `type` (PROVIDER_<TYPE>_*), or null when incomplete. */
export function operatorDefaultCredentials(ctx: AppContext, type: ProviderType): ProviderConfig | null {
  const env = ctx.config.providers[type] ?? {};
  const out: Record<string, string> = {};
  for (const k of REQUIRED_DEFAULTS[type]) {
    const v = env[k];
    if (!v) return null;
    out[k] = v;
  }
  for (const k of OPTIONAL_DEFAULTS[type] ?? []) if (env[k]) out[k] = env[k] as string;
  return out as unknown as ProviderConfig;
}

/**
 * Provider types a brand offers, given its connections' switches (type → enabled): its own enabled
 * connections, and the operator's defaults for the types where it has no connection at all.
 */
export function enabledTypes(ctx: AppContext, switches: Map<string, boolean>): ProviderType[] {
  return PROVIDER_TYPES.filter((type) => {
    const enabled = switches.get(type);
    return enabled === undefined ? operatorDefaultCredentials(ctx, type) !== null : enabled;
  });
}

/** Where a brand's connection of `type` returns (the connection's `callbackUrl`). */
export function callbackUrl(ctx: AppContext, oauthCallbackId: string, type: string): string {
  return `${ctx.config.baseUrl}/oauth/${type}/${oauthCallbackId}/callback`;
}
