const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** The bytes a base58 string decodes to, or null when it is not base58. */
export function base58Length(s: string): number | null {
  if (!BASE58.test(s)) return null;
  let n = 0n;
  for (const c of s) n = n * 58n + BigInt(ALPHABET.indexOf(c));
  let bytes = 0;
  while (n > 0n) {
    n >>= 8n;
    bytes++;
  }
  for (const c of s) {
    if (c !== '1') break;
    bytes++;
  }
  return bytes;
}

/** Why `s` is not a Solana address (base58 of 32 bytes), or null when it is one. */
export function addressProblem(s: string): string | null {
  if (!s) return null;
  if (!BASE58.test(s)) return 'Only base58 characters: no 0, O, I or l, and no spaces.';
  const len = base58Length(s);
  if (len !== 32) return `This decodes to ${len} bytes; a Solana address is 32.`;
  return null;
}

/** Why `s` is not a raw token amount (digits only), or null. */
export function rawAmountProblem(s: string): string | null {
  if (!s) return null;
  return /^[0-9]+$/.test(s) ? null : 'Digits only: the amount in raw units (no point, sign or spaces).';
}

/** Raw units as tokens, exactly: `1500000` with 6 decimals is `1.5`. */
export function toTokens(raw: string, decimals: number): string {
  const digits = raw.replace(/^0+(?=\d)/, '');
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, -decimals);
  const frac = padded.slice(-decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

/** Tokens as raw units, or null when `tokens` has more decimals than the mint or is not a number. */
export function toRaw(tokens: string, decimals: number): string | null {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(tokens.trim());
  if (!m || (!m[1] && !m[2])) return null;
  const frac = m[2] ?? '';
  if (frac.length > decimals) return null;
  const raw = `${m[1] ?? ''}${frac.padEnd(decimals, '0')}`.replace(/^0+(?=\d)/, '');
  return raw || '0';
}
