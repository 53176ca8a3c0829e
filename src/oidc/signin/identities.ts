import { sha256 } from '../../lib/hash.js';

/** A sign-in identity: a wallet address, or an upstream provider's account. */
export type SignInIdentity =
  | { kind: 'wallet'; address: string }
  | { kind: 'oauth'; provider: string; externalUserId: string };

/**
 * The hash kept for an identity while its account is in the deletion grace window: enough to
 * recognise the identity when it signs in again, not enough to list who the account was.
 */
export function identityHash(identity: SignInIdentity): string {
  return identity.kind === 'wallet'
    ? sha256(`wallet:${identity.address}`)
    : sha256(`oauth:${identity.provider}:${identity.externalUserId}`);
}
