import { generateKeyPair, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { defaults } from '../config/defaults.js';
import type { Clock } from '../lib/clock.js';
import type { Encryptor } from '../lib/encryption.js';
import { randomAlphanumeric } from '../lib/ids.js';
import type { InvalidationBus } from '../events/invalidation.js';
import type { SigningKeyRow, SigningKeyStore } from './stores.js';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

interface KeyState {
  active: SigningKey;
  byKid: Map<string, KeyObject>;
  jwksBody: string;
  loadedAt: number;
}

const generateRsaKeyPair = promisify(generateKeyPair);

/**
 * A new RSA-2048 signing key's row, its private part sealed with the encryption key. The key is made
 * on the libuv pool: finding two 1024-bit primes takes 60–650 ms of CPU (median ~160 ms; it varies
 * with luck and with the VM), which on the event loop would stall every request of a live server at
 * a scheduled rotation.
 */
export async function newSigningKeyRow(
  encryptor: Encryptor,
  clock: Clock,
): Promise<Omit<SigningKeyRow, 'retired_at'>> {
  const { privateKey, publicKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 });
  const kid = `${clock.now().toISOString().slice(0, 10).replace(/-/g, '')}-${randomAlphanumeric(8)}`;
  const jwk = publicKey.export({ format: 'jwk' });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return {
    kid,
    alg: 'RS256',
    public_jwk: { kty: 'RSA', use: 'sig', alg: 'RS256', kid, n: jwk.n, e: jwk.e },
    private_key_enc: encryptor.encrypt(pem, `signing-key:${kid}`),
    created_at: clock.now(),
    activates_at: null,
  };
}

/** When a key may sign (ms): a scheduled key's activates_at, else shortly after its creation. */
export function activation(row: SigningKeyRow): number {
  return row.activates_at
    ? row.activates_at.getTime()
    : row.created_at.getTime() + defaults.keyActivationDelayMs;
}

/**
 * The signing keys as this instance sees them. Signing always uses the newest key; the state is
 * reread when older than `keySetRefreshMs` or when the newest kid in the database changed, so a
 * `gatehouse keys rotate` takes effect on every instance within a second.
 */
export class KeyStore {
  private state: KeyState | null = null;
  private loading: Promise<KeyState> | null = null;
  /** The generation `loading` started in. */
  private loadingGeneration = 0;
  /**
   * Bumped by every invalidation: a read that started before it may predate the change, so it is
   * neither shared with later callers nor kept as the state.
   */
  private generation = 0;

  constructor(
    private readonly store: SigningKeyStore,
    private readonly encryptor: Encryptor,
    private readonly clock: Clock,
    private readonly bus?: InvalidationBus,
  ) {
    bus?.on('keys', () => {
      this.generation++;
      this.state = null;
    });
  }

  /** Creates the first key when there is none (several instances starting at once: the advisory lock decides). */
  async ensureKey(): Promise<void> {
    await this.store.withCreationLock(async (locked) => {
      if ((await locked.list()).length === 0)
        await locked.insert(await newSigningKeyRow(this.encryptor, this.clock));
    });
    await this.reload();
  }

  private async load(): Promise<KeyState> {
    const now = this.clock.nowMs();
    const rows = await this.store.list();
    const live = rows.filter(
      (r) => !r.retired_at || r.retired_at.getTime() + defaults.retiredKeyGrace * 1000 > now,
    );
    if (live.length === 0) throw new Error('no signing key; run `gatehouse keys rotate`');
    // Sign with the newest key every instance already publishes: one created less than
    // keyActivationDelayMs ago may be missing from another instance's JWKS (each rereads the set
    // once a second), so a verifier would not find it; a scheduled key waits for its activates_at
    // (published a day before). A lone first key is used at once.
    const newest = live.find((r) => activation(r) <= now) ?? live[0];
    const pem = this.encryptor.decrypt(newest.private_key_enc, `signing-key:${newest.kid}`);
    const privateKey = createPrivateKey(pem);
    const byKid = new Map<string, KeyObject>();
    const jwks = live.map((r) => {
      const jwk = r.public_jwk as unknown as Record<string, string>;
      byKid.set(r.kid, createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' }));
      return { kty: 'RSA', use: 'sig', alg: 'RS256', kid: r.kid, n: jwk.n, e: jwk.e };
    });
    return {
      active: { kid: newest.kid, privateKey, publicKey: byKid.get(newest.kid)! },
      byKid,
      jwksBody: JSON.stringify({ keys: jwks }),
      loadedAt: now,
    };
  }

  async reload(): Promise<KeyState> {
    const generation = this.generation;
    let loading = this.loading;
    if (!loading || this.loadingGeneration !== generation) {
      const started = this.load().finally(() => {
        if (this.loading === started) this.loading = null;
      });
      loading = started;
      this.loading = started;
      this.loadingGeneration = generation;
    }
    const state = await loading;
    if (generation === this.generation) this.state = state;
    return state;
  }

  private async current(): Promise<KeyState> {
    const s = this.state;
    // While the invalidation channel is down the key set is reread on each use (fail closed).
    if (
      s &&
      (!this.bus || this.bus.healthy) &&
      this.clock.nowMs() - s.loadedAt < defaults.keySetRefreshMs &&
      this.clock.nowMs() >= s.loadedAt
    )
      return s;
    try {
      return await this.reload();
    } catch (err) {
      // The database is unreachable: keep signing and verifying with the key set already read (no
      // rotation can happen meanwhile), and try again after the usual interval, not on every request.
      if (!s) throw err;
      this.state = { ...s, loadedAt: this.clock.nowMs() };
      return this.state;
    }
  }

  /** The key to sign with now. */
  async signingKey(): Promise<SigningKey> {
    return (await this.current()).active;
  }

  /** A public key by kid; a miss rereads the key set once (another instance may have rotated). */
  async verificationKey(kid: string | undefined): Promise<KeyObject | undefined> {
    let s = await this.current();
    if (!kid) return undefined;
    let key = s.byKid.get(kid);
    if (!key && this.clock.nowMs() - s.loadedAt > 50) {
      s = await this.reload();
      key = s.byKid.get(kid);
    }
    return key;
  }

  /** The JWKS document, serialised once per key-set change. */
  async jwks(): Promise<string> {
    return (await this.current()).jwksBody;
  }
}
