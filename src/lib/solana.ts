import bs58 from 'bs58';

/** A Solana address: base58 that decodes to exactly 32 bytes. */
export function isSolanaAddress(value: string): boolean {
  if (typeof value !== 'string' || value.length < 32 || value.length > 44) return false;
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}

export function decodeAddress(value: string): Uint8Array {
  return bs58.decode(value);
}
