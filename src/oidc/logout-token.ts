import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { signRs256 } from './tokens.js';

/** The event a logout token carries (OpenID Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** What a queued back-channel delivery keeps: the claims that stay the same on every attempt. */
export interface LogoutTokenClaims {
  /** The app's client id. */
  aud: string;
  sub: string;
  sid: string;
  jti: string;
}

/**
 * A logout token, signed like ID tokens (RS256, the current key) with `typ: logout+jwt`, `iat` now
 * and `exp` 120 s later; never a `nonce` (the spec forbids it, so it cannot pass for an ID token).
 */
export function signLogoutToken(ctx: AppContext, c: LogoutTokenClaims): Promise<string> {
  return signRs256(
    ctx,
    {
      iss: ctx.config.issuer,
      aud: c.aud,
      sub: c.sub,
      sid: c.sid,
      jti: c.jti,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    },
    { ttl: defaults.logoutTokenTtl, typ: 'logout+jwt' },
  );
}
