import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { authenticateClient } from './client-auth.js';
import { createDeviceAuthorization } from './device-store.js';
import { parseScope } from './grant.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/**
 * POST /oauth2/device/authorize (RFC 8628 §3.1–3.2): `client_id` only; the app must allow the
 * device grant and every requested scope. Without `scope`, the app's allowed scopes are asked for.
 */
export async function deviceAuthorize(
  ctx: AppContext,
  req: FastifyRequest,
  body: { client_id?: string; client_secret?: string; scope?: string },
): Promise<DeviceAuthorizationResponse> {
  const client = await authenticateClient(ctx, req, body, { idOnly: true });
  if (!client.allowedGrantTypes.includes(DEVICE_GRANT))
    throw new OAuthError('unauthorized_client', 'this client may not use the device flow');
  let scopes = parseScope(body.scope);
  if (scopes.length === 0) scopes = [...client.allowedScopes];
  for (const s of scopes) {
    if (!client.allowedScopes.includes(s)) throw new OAuthError('invalid_scope', `scope not allowed: ${s}`);
  }
  const d = await createDeviceAuthorization(ctx, client, scopes);
  const verificationUri = `${ctx.config.baseUrl}/device`;
  return {
    device_code: d.deviceCode,
    user_code: d.userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(d.userCode)}`,
    expires_in: d.expiresIn,
    interval: d.interval,
  };
}
