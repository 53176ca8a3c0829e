// Verifying Gatehouse access tokens locally with jose: the signature against the issuer's JWKS
// (cached by kid, refetched on an unknown kid), then iss, aud (your brand's slug), exp and typ.
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

/**
 * @param {object} opts
 * @param {string} opts.issuer        Gatehouse's BASE_URL, compared exactly with `iss`
 * @param {string} opts.audience      the brand slug: access tokens' `aud`
 * @param {string} [opts.org]         the org slug, checked against the `org` claim when the token has one
 * @param {string[]} [opts.clientIds] apps allowed to call you, checked against `client_id` when present
 * @param {string} [opts.jwksUri]     default: the discovery document's jwks_uri
 * @param {() => Date} [opts.now]     the clock (tests)
 */
export async function createVerifier({ issuer, audience, org, clientIds, jwksUri, now }) {
  if (!jwksUri) {
    const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    jwksUri = discovery.jwks_uri;
  }
  const jwks = createRemoteJWKSet(new URL(jwksUri));

  /** The token's claims, or throws a VerificationError (answer 401). */
  return async function verify(token) {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer,
        audience,
        algorithms: ['RS256'],
        typ: 'at+jwt', // RFC 9068: an ID token is not an access token
        requiredClaims: ['exp', 'sub'],
        currentDate: now?.(),
      }));
    } catch (e) {
      if (e instanceof errors.JOSEError) throw new VerificationError(e.code, e.message);
      throw e;
    }
    // Newer Gatehouse versions put the org slug and the client id in access tokens; older ones
    // may not. Check what is there, and tolerate its absence.
    if (org !== undefined && payload.org !== undefined && payload.org !== org)
      throw new VerificationError('ERR_JWT_CLAIM_VALIDATION_FAILED', 'unexpected "org" claim value');
    if (clientIds !== undefined && payload.client_id !== undefined && !clientIds.includes(payload.client_id))
      throw new VerificationError('ERR_JWT_CLAIM_VALIDATION_FAILED', 'unexpected "client_id" claim value');
    return payload;
  };
}

export class VerificationError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Whether the token's `scope` (space-separated) grants `needed`. */
export function hasScope(payload, needed) {
  return typeof payload.scope === 'string' && payload.scope.split(' ').includes(needed);
}
