import { randomBytes, randomUUID } from 'node:crypto';

const ALPHANUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Random alphanumerics with no modulo bias (rejection sampling). */
export function randomAlphanumeric(length: number, alphabet = ALPHANUM): string {
  const out: string[] = [];
  const max = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < max) out.push(alphabet[b % alphabet.length]);
      if (out.length === length) break;
    }
  }
  return out.join('');
}

/** Resource ids: an optional prefix (`log_`, `gate_`, `wh_`) and 20 random alphanumerics (~119 bits). */
export function newId(prefix = ''): string {
  return prefix + randomAlphanumeric(20);
}

/** A 256-bit secret, base64url, with an optional recognisable prefix (`ghsk_`). */
export function newSecret(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

export const uuid = randomUUID;
