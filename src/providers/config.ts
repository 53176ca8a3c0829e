import type { AppContext } from '../context.js';
import {
  operatorDefaultCredentials,
  type ProviderConfig,
} from '../modules/connections/connections.service.js';
import type { ProviderEndpoints } from './provider.js';
import { PROVIDER_TYPES, type ProviderType } from './types.js';
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

/**
 * Provider types a brand offers: its own enabled connections, and the operator's defaults for the
 * types where the brand has no connection at all (a disabled connection switches the type off).
 */
export async function enabledProviderTypes(ctx: AppContext, brandId: string): Promise<ProviderType[]> {
  const own = await ctx.db
    .selectFrom('connections')
    .select(['type', 'enabled'])
    .where('brand_id', '=', brandId)
    .execute();
  const byType = new Map(own.map((c) => [c.type, c.enabled]));
  return PROVIDER_TYPES.filter((type) => {
    const enabled = byType.get(type);
    return enabled === undefined ? operatorDefaultCredentials(ctx, type) !== null : enabled;
  });
}
