// Verifying a Gatehouse token-gate attestation offline with jose: the signature against the
// issuer's JWKS (cached by kid, refetched on an unknown kid), then alg, typ, iss and exp, then that
// it says what you asked about: this org, this wallet, this gate (or policy).
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

/** The JWS header `typ` of an attestation: an ID or access token of the same issuer is refused. */
export const ATTESTATION_TYP = 'gate-attestation+jwt';

/**
 * @param {object} opts
 * @param {string} opts.issuer     Gatehouse's BASE_URL, compared exactly with `iss`
 * @param {string} [opts.jwksUri]  default: the discovery document's jwks_uri
 * @param {() => Date} [opts.now]  the clock (tests)
 */
export async function createAttestationVerifier({ issuer, jwksUri, now }) {
  if (!jwksUri) {
    const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    jwksUri = discovery.jwks_uri;
  }
  const jwks = createRemoteJWKSet(new URL(jwksUri));

  /**
   * The attestation's claims when it is genuine, unexpired and about `expect`; else throws a
   * VerificationError. `has_access` is the answer: a valid attestation may say `false`.
   * @param {string} attestation  the compact JWS from `attest=true`
   * @param {{ org: string, wallet: string, gate?: string, policy?: string }} expect
   */
  return async function verify(attestation, expect) {
    let payload;
    try {
      ({ payload } = await jwtVerify(attestation, jwks, {
        issuer,
        algorithms: ['RS256'],
        typ: ATTESTATION_TYP,
        requiredClaims: ['iat', 'exp', 'sub', 'org', 'has_access'],
        currentDate: now?.(),
      }));
    } catch (e) {
      if (e instanceof errors.JOSEError) throw new VerificationError(e.code, e.message);
      throw e;
    }
    const claim = (name, value) => {
      if (value !== undefined && payload[name] !== value)
        throw new VerificationError('ERR_JWT_CLAIM_VALIDATION_FAILED', `unexpected "${name}" claim value`);
    };
    claim('org', expect.org);
    claim('sub', expect.wallet);
    // An attestation is about a gate or a policy, never both: ask for the one you need.
    if ((expect.gate === undefined) === (expect.policy === undefined))
      throw new TypeError('expect exactly one of gate and policy');
    claim('gate', expect.gate);
    claim('policy', expect.policy);
    if (typeof payload.has_access !== 'boolean')
      throw new VerificationError('ERR_JWT_CLAIM_VALIDATION_FAILED', '"has_access" is not a boolean');
    return payload;
  };
}

export class VerificationError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
