import { SignJWT, compactVerify, jwtVerify, type JWTPayload, errors as joseErrors } from 'jose';
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

/** Our verification key for a token's `kid`; a key set that cannot be read is reported to `onKeySetError`. */
function keyResolver(keys: KeyStore, onKeySetError: (err: unknown) => void) {
  return async (header: { kid?: string }) => {
    let key: Awaited<ReturnType<KeyStore['verificationKey']>>;
    try {
      key = await keys.verificationKey(header.kid);
    } catch (err) {
      onKeySetError(err);
      throw err;
    }
    if (!key) throw new joseErrors.JWKSNoMatchingKey();
    return key;
  };
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
      keyResolver(keys, (err) => {
        keySetError = err;
      }),
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

/**
 * An ID token this service issued, read for a hint (RP-Initiated Logout 1.0 §2: "even expired"): RS256
 * by one of our keys, `typ` JWT (an access or logout token is refused), our issuer, a string `sub`
 * and one audience. Expiry is not checked. Null when any of it fails.
 */
export async function readIdTokenHint(
  keys: KeyStore,
  token: string,
  issuer: string,
): Promise<{ sub: string; aud: string; sid?: string } | null> {
  let keySetError: unknown;
  try {
    const { payload, protectedHeader } = await compactVerify(
      token,
      keyResolver(keys, (err) => {
        keySetError = err;
      }),
      { algorithms: ['RS256'] },
    );
    if (protectedHeader.typ !== 'JWT') return null;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    const aud = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud;
    if (claims.iss !== issuer || typeof claims.sub !== 'string' || typeof aud !== 'string') return null;
    if (claims.sid !== undefined && typeof claims.sid !== 'string') return null;
    return { sub: claims.sub, aud, ...(typeof claims.sid === 'string' ? { sid: claims.sid } : {}) };
  } catch {
    if (keySetError !== undefined) throw keySetError;
    return null;
  }
}
