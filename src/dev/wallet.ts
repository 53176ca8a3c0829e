import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';

/** A refusal of `gatehouse dev`, shown to the user as one line. */
export class DevError extends Error {}

/** A local development wallet: an Ed25519 key pair standing in for a Solana wallet. */
export interface DevWallet {
  /** base58 of the 32-byte public key: the Solana address. */
  address: string;
  path: string;
  /** Whether this call created the file. */
  created: boolean;
  /** Base64 Ed25519 signature of the UTF-8 bytes of `message`. */
  sign(message: string): string;
}

/** Where `gatehouse dev` keeps a wallet: `DATA_DIR/dev-wallet.json`, or `dev-wallet-<name>.json`. */
export function devWalletPath(dataDir: string, name?: string): string {
  if (name !== undefined && !/^[a-z0-9-]{1,40}$/.test(name))
    throw new DevError('a wallet name is 1-40 characters of a-z, 0-9 and -');
  return join(dataDir, name ? `dev-wallet-${name}.json` : 'dev-wallet.json');
}

/** RFC 8410 PKCS#8 header of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

function keysFromSeed(seed: Buffer): { privateKey: KeyObject; publicRaw: Buffer } {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicRaw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicRaw };
}

/**
 * Opens the wallet at `path`, creating it on first use. The file has the Solana CLI keypair format
 * (a JSON array of 64 bytes: the 32-byte secret seed, then the public key), so `solana-keygen pubkey`
 * and wallets that import keypair files read it. It holds a private key: it is created with mode
 * 0600 in one step (`wx`, never replacing a file), and a file others can read is refused.
 */
export function openDevWallet(path: string): DevWallet {
  let created = false;
  let bytes: Buffer;
  try {
    bytes = readKeypair(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const seed = randomBytes(32);
    const fresh = Buffer.concat([seed, keysFromSeed(seed).publicRaw]);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(path, `${JSON.stringify([...fresh])}\n`, { mode: 0o600, flag: 'wx' });
      created = true;
      bytes = fresh;
    } catch (err) {
      // Another process created it between our read and write: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      bytes = readKeypair(path);
    }
  }
  const seed = bytes.subarray(0, 32);
  const { privateKey, publicRaw } = keysFromSeed(seed);
  if (!publicRaw.equals(bytes.subarray(32)))
    throw new DevError(`${path}: the public key does not belong to the secret key`);
  return {
    address: bs58.encode(publicRaw),
    path,
    created,
    sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64'),
  };
}

function readKeypair(path: string): Buffer {
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077)
    throw new DevError(
      `${path} holds a private key but others can read it (mode ${mode.toString(8)}): chmod 600 it`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 64 ||
    !parsed.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
  )
    throw new DevError(`${path} is not a keypair file (a JSON array of 64 bytes)`);
  return Buffer.from(parsed as number[]);
}
