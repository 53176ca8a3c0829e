import * as oauth from 'oauth4webapi';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/schema.js';
import { operatorDefaultCredentials, resolveEndpoints } from '../../providers/config.js';
import { PROVIDERS } from '../../providers/index.js';
import type { OAuthProviderDefinition } from '../../providers/provider.js';
import {
  type OAuthProviderConfig,
  type ProviderConfig,
  PROVIDER_TYPES,
  type ProviderType,
} from '../../providers/types.js';

/**
 * The hook DELETE /users/me/oauth-tokens/:id calls: in the unlink's transaction, before the link is
 * deleted, it reads the link's sealed provider tokens; the function it returns revokes them at the
 * provider (where the provider has a revocation endpoint) and is called after commit. Revocation is
 * best effort: the link is gone either way; the result says whether the provider confirmed.
 */
export async function providerRevocationFor(
  ctx: AppContext,
  trx: Executor,
  linkId: string,
): Promise<() => Promise<boolean>> {
  const link = await ctx.stores.signin.on(trx).accounts.oauthLink(linkId);
  const type = link?.provider as ProviderType | undefined;
  if (!link || !type || !PROVIDER_TYPES.includes(type)) return async () => false;
  const def = PROVIDERS[type];
  // The refresh token ends the whole grant where providers distinguish; else the access token.
  const token = link.refreshToken ?? link.accessToken;
  const hint = link.refreshToken ? 'refresh_token' : 'access_token';
  if (def.kind !== 'oauth' || !token) return async () => false;
  const brandId = link.brandId;
  return async () => {
    try {
      const config: ProviderConfig | null = brandId
        ? ((await ctx.stores.signin.connections.credentials(brandId, type))?.config ?? null)
        : operatorDefaultCredentials(ctx, type);
      if (!config) return false;
      return await revoke(ctx, def, config as OAuthProviderConfig, token, hint);
    } catch {
      return false;
    }
  };
}

async function revoke(
  ctx: AppContext,
  def: OAuthProviderDefinition,
  config: OAuthProviderConfig,
  token: string,
  hint: string,
): Promise<boolean> {
  const { endpoints } = resolveEndpoints(ctx, def.type, config);
  if (!endpoints.revocationUrl) return false;
  const as: oauth.AuthorizationServer = {
    issuer: endpoints.issuer ?? new URL(endpoints.tokenUrl).origin,
    revocation_endpoint: endpoints.revocationUrl,
  };
  const client: oauth.Client = { client_id: config.clientId };
  const secret = def.clientSecret ? await def.clientSecret(ctx, config, endpoints) : config.clientSecret;
  const auth =
    def.clientAuth === 'client_secret_basic'
      ? oauth.ClientSecretBasic(secret)
      : oauth.ClientSecretPost(secret);
  const res = await oauth.revocationRequest(as, client, auth, token, {
    additionalParameters: { token_type_hint: hint },
    [oauth.allowInsecureRequests]: endpoints.revocationUrl.startsWith('http:'),
    signal: AbortSignal.timeout(defaults.providerRequestTimeoutMs),
  });
  await oauth.processRevocationResponse(res);
  return true;
}
