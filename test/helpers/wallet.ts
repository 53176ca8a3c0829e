import { generateKeyPairSync, sign } from 'node:crypto';
import bs58 from 'bs58';

export interface TestWallet {
  /** base58 of the raw 32-byte public key: a Solana address. */
  address: string;
  /** Ed25519 signature of `message` (UTF-8), raw 64 bytes. */
  signBytes(message: string | Uint8Array): Buffer;
  /** The wallet/verify body fields for `message`: base64 signature and signed bytes. */
  prove(message: string): { address: string; signature: string; signedMessage: string };
}

/** A real Ed25519 key pair standing in for a Solana wallet. */
export function createTestWallet(): TestWallet {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const address = bs58.encode(raw);
  const signBytes = (message: string | Uint8Array) =>
    sign(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, privateKey);
  return {
    address,
    signBytes,
    prove: (message: string) => ({
      address,
      signature: signBytes(message).toString('base64'),
      signedMessage: Buffer.from(message, 'utf8').toString('base64'),
    }),
  };
}
