import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets that must be read back (signing keys, provider configs, webhook secrets).
 * Ciphertext format: `v1.<keyId>.<iv>.<tag>.<data>` (base64url parts). The key id (first 8 hex of
 * SHA-256 of the key) lets a future ENCRYPTION_KEY rotation find which key sealed a value.
 */
export class Encryptor {
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(key: Buffer, previousKeys: Buffer[] = []) {
    this.keyId = Encryptor.idOf(key);
    this.keys.set(this.keyId, key);
    for (const k of previousKeys) this.keys.set(Encryptor.idOf(k), k);
  }

  static idOf(key: Buffer): string {
    return createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  encrypt(plaintext: string, aad = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.keyId)!, iv);
    cipher.setAAD(Buffer.from(aad));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      this.keyId,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      data.toString('base64url'),
    ].join('.');
  }

  decrypt(sealed: string, aad = ''): string {
    const [version, keyId, iv, tag, data] = sealed.split('.');
    const key = this.keys.get(keyId);
    if (version !== 'v1' || !key) throw new Error('cannot decrypt: unknown format or encryption key');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
