import { SignJWT, jwtVerify, type JWTPayload, errors as joseErrors } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyStore } from './keys.js';

/** Signs claims with the active RS256 key. `exp` is set from `ttl` seconds on the injectable clock. */
export async function signJwt(
  keys: KeyStore,
  clock: Clock,
  claims: JWTPayload,
  opts: { ttl: number; typ?: string },
): Promise<string> {
  const key = await keys.signingKey();
  const iat = clock.nowSec();
  return new SignJWT({ ...claims, iat, exp: iat + opts.ttl })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: opts.typ ?? 'JWT' })
    .sign(key.privateKey);
}

export interface VerifyOptions {
  issuer: string;
  audience?: string | string[];
  typ?: string;
}

/**
 * Verifies an RS256 JWT signed by one of our keys. Anything else (alg none, HS256, unknown kid,
 * bad signature, wrong iss/aud/typ, expired) returns null: callers answer `invalid_token`.
 */
export async function verifyJwt(
  keys: KeyStore,
  clock: Clock,
  token: string,
  opts: VerifyOptions,
): Promise<(JWTPayload & Record<string, unknown>) | null> {
  // A key set that could not be read (database down) is not the token's fault: that error propagates.
  let keySetError: unknown;
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        let key: Awaited<ReturnType<KeyStore['verificationKey']>>;
        try {
          key = await keys.verificationKey(header.kid);
        } catch (err) {
          keySetError = err;
          throw err;
        }
        if (!key) throw new joseErrors.JWKSNoMatchingKey();
        return key;
      },
      {
        algorithms: ['RS256'],
        issuer: opts.issuer,
        audience: opts.audience,
        typ: opts.typ,
        currentDate: clock.now(),
        clockTolerance: 0,
      },
    );
    return payload as JWTPayload & Record<string, unknown>;
  } catch {
    if (keySetError !== undefined) throw keySetError;
    return null;
  }
}
