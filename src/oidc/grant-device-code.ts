import { OAuthError } from '../http/errors.js';
import { pollDevice } from './device-store.js';
import { decideGates, UNMET_REQUIREMENT } from './gates.js';
import { issueTokens } from './tokens.js';
import { type Grant, invalidGrant, required } from './grant.js';

/**
 * RFC 8628 §3.4–3.5: device polling. Pacing is per device code (`slow_down` adds 5 s to its interval);
 * polls also spend the token endpoint's per-client budget (in client authentication), and unknown
 * codes a budget per network source, checked before the lookup and spent on each miss.
 */
export const deviceCodeGrant: Grant = {
  name: 'urn:ietf:params:oauth:grant-type:device_code',
  clientIdOnly: true,
  async handler({ ctx, req, client, body }) {
    const deviceCode = required(body, 'device_code');
    const source = ctx.rateLimits.source(req);
    await ctx.rateLimits.consume('deviceCodeUnknown', source, undefined, undefined, 0);
    // The requirement was checked when the user approved; the device's tokens follow the gates now,
    // decided before the approval is consumed so a failed check (or RPC) leaves it for the next poll.
    let gates: Awaited<ReturnType<typeof decideGates>> | undefined;
    const poll = await pollDevice(ctx, deviceCode, client.clientId, async (approved) => {
      gates = await decideGates(ctx, client, approved.user_id as string, approved.scopes);
      if (!gates.requirementMet) throw new OAuthError('access_denied', UNMET_REQUIREMENT);
    });
    switch (poll.kind) {
      case 'invalid':
        await ctx.rateLimits.consume('deviceCodeUnknown', source);
        throw invalidGrant('the device code is invalid or already used');
      case 'expired':
        throw new OAuthError('expired_token', 'the device code has expired');
      case 'slow_down':
        throw new OAuthError('slow_down', 'polling too fast; add 5 seconds to the interval');
      case 'pending':
        throw new OAuthError('authorization_pending', 'the user has not approved yet');
      case 'denied':
        throw new OAuthError(
          'access_denied',
          poll.denial === 'requirement' ? UNMET_REQUIREMENT : 'the user denied the request',
        );
    }
    const row = poll.row;
    if (!gates) throw new Error('the device grant was consumed without its gate decision');
    return issueTokens(ctx, {
      client,
      grant: 'urn:ietf:params:oauth:grant-type:device_code',
      scopes: gates.scopes,
      gates: { grantScopes: row.scopes, dropped: gates.dropped, passedPolicies: gates.passedPolicies },
      user: { id: row.user_id as string, authTime: Number(row.auth_time), familyId: row.id },
    });
  },
};
