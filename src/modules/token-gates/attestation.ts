import type { AppContext } from '../../context.js';
import { signRs256 } from '../../oidc/tokens.js';
import type { CheckResult } from './token-gates.schemas.js';

/** Seconds an attestation is valid (DESIGN §3: exp = iat + 300). */
export const ATTESTATION_TTL = 300;
/** The JWS header `typ` of an attestation, so it cannot pass for an ID or access token. */
export const ATTESTATION_TYP = 'gate-attestation+jwt';

/**
 * A signed copy of a gate check's answer (`attest=true`, DESIGN §3): RS256 with the issuer's current
 * key (kid in the JWKS), claims iss, sub (wallet), gate, org (slug), has_access, balance, reason,
 * iat, exp. It signs the answer given, cached or fresh. Signed by `crypto.sign` on the libuv pool,
 * as the token endpoint does, so a bulk check's signatures do not hold the event loop one by one.
 */
export function attestGate(
  ctx: AppContext,
  org: string,
  gateId: string,
  wallet: string,
  result: CheckResult,
): Promise<string> {
  return signRs256(
    ctx,
    {
      iss: ctx.config.issuer,
      sub: wallet,
      gate: gateId,
      org,
      has_access: result.hasAccess,
      balance: result.balance,
      reason: result.reason,
    },
    { ttl: ATTESTATION_TTL, typ: ATTESTATION_TYP },
  );
}

/** A signed copy of a policy check's answer: iss, sub (wallet), policy, org, has_access, iat, exp. */
export function attestPolicy(
  ctx: AppContext,
  org: string,
  policyId: string,
  wallet: string,
  hasAccess: boolean,
): Promise<string> {
  return signRs256(
    ctx,
    { iss: ctx.config.issuer, sub: wallet, policy: policyId, org, has_access: hasAccess },
    { ttl: ATTESTATION_TTL, typ: ATTESTATION_TYP },
  );
}
