import type { InteractionRow, UserRow } from '../../src/db/schema.js';
import type { Clock } from '../../src/lib/clock.js';
import type { AuthorizationCodeRow } from '../../src/oidc/stores.js';
import { newId } from '../../src/lib/ids.js';
import { identityHash } from '../../src/oidc/signin/identities.js';
import type {
  AccountActivity,
  AccountStore,
  BrandPresentation,
  InteractionStore,
  ProviderStateRow,
  ProviderStateStore,
  SessionStore,
  SigninStores,
  StoredSession,
  WalletChallengeRow,
  WalletChallengeStore,
} from '../../src/oidc/signin/stores.js';

/**
 * Sign-in's stores in memory: what the SQL stores keep, in maps, with the same answers (live rows
 * only, single use, one holder per wallet and provider account). No transactions: `atomic` runs
 * the function on the same maps, which is enough for one test at a time.
 */
export class MemorySigninStores implements SigninStores {
  readonly interactionRows = new Map<string, InteractionRow>();
  readonly sessionRows = new Map<
    string,
    StoredSession & { tokenHash: string; expiresAt: Date; createdAt: Date; lastSeenAt?: Date }
  >();
  readonly challengeRows = new Map<string, WalletChallengeRow>();
  readonly stateRows = new Map<string, ProviderStateRow>();
  readonly users = new Map<string, UserRow>();
  /** address → user id */
  readonly wallets = new Map<string, string>();
  /** `${provider}:${externalUserId}` → user id */
  readonly links = new Map<string, string>();
  /** The brand each link was last used through. */
  readonly linkBrands = new Map<string, string>();
  /** identity hash → user id, for accounts in their deletion grace window */
  readonly deletedIdentities = new Map<string, string>();
  readonly activity: AccountActivity[] = [];
  readonly brandRows = new Map<string, BrandPresentation & { oauthCallbackId: string }>();

  constructor(private readonly clock: Clock) {}

  interactions: InteractionStore = {
    insert: async (row) => {
      this.interactionRows.set(row.id, { ...row, params: row.params } as InteractionRow);
    },
    findLive: async (id, now) => {
      const row = this.interactionRows.get(id);
      return row && row.expires_at > now && !row.completed_at ? { ...row } : null;
    },
    complete: async (id, now) => {
      const row = this.interactionRows.get(id);
      if (!row || row.completed_at || row.expires_at <= now) return false;
      row.completed_at = now;
      return true;
    },
    completeSignedIn: async (id, f, now) => {
      const row = this.interactionRows.get(id);
      if (!row || row.completed_at || row.expires_at <= now) return false;
      Object.assign(row, { user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime });
      row.completed_at = now;
      return true;
    },
    attachUser: async (id, f, now) => {
      const row = this.interactionRows.get(id);
      if (!row || row.completed_at || row.expires_at <= now) return false;
      Object.assign(row, { user_id: f.userId, session_id: f.sessionId, auth_time: f.authTime });
      return true;
    },
    deleteExpired: async (now) => deleteWhere(this.interactionRows, (r) => r.expires_at < now),
  };

  sessions: SessionStore = {
    insert: async (s) => {
      this.sessionRows.set(s.id, { ...s });
    },
    findLive: async (tokenHash, brandId, now) => {
      for (const s of this.sessionRows.values()) {
        const live = s.expiresAt > now && this.users.get(s.userId)?.deleted_at === null;
        if (s.tokenHash === tokenHash && s.brandId === brandId && live)
          return { id: s.id, userId: s.userId, brandId: s.brandId, authTime: s.authTime };
      }
      return null;
    },
    find: async (id) => {
      const s = this.sessionRows.get(id);
      return s ? { id: s.id, userId: s.userId, brandId: s.brandId, authTime: s.authTime } : null;
    },
    renew: async (id, f) => {
      const s = this.sessionRows.get(id);
      if (!s) return false;
      Object.assign(s, {
        tokenHash: f.tokenHash,
        authTime: f.authTime,
        expiresAt: f.expiresAt,
        lastSeenAt: f.now,
        userAgent: f.userAgent,
        ip: f.ip,
      });
      return true;
    },
    touch: async (id, now) => {
      const s = this.sessionRows.get(id);
      if (s) s.lastSeenAt = now;
    },
    listOfUser: async () => [],
    idsOfUser: async (userId) =>
      [...this.sessionRows.values()].filter((s) => s.userId === userId).map((s) => s.id),
    end: async (ids) => {
      const ended = ids.flatMap((id) => {
        const s = this.sessionRows.get(id);
        return s ? [{ id, userId: s.userId, brandId: s.brandId, authTime: s.authTime, clientIds: [] }] : [];
      });
      for (const id of ids) this.sessionRows.delete(id);
      return ended;
    },
    deleteByToken: async (tokenHash, brandId) => {
      deleteWhere(this.sessionRows, (s) => s.tokenHash === tokenHash && s.brandId === brandId);
    },
    deleteOfUser: async (userId) => deleteWhere(this.sessionRows, (s) => s.userId === userId),
    deleteExpired: async (now) => deleteWhere(this.sessionRows, (s) => s.expiresAt < now),
  };

  walletChallenges: WalletChallengeStore = {
    insert: async (row) => {
      this.challengeRows.set(row.id, { ...row });
    },
    insertDuring: async (row, interactionId, now) => {
      if (!(await this.interactions.findLive(interactionId, now))) return false;
      this.challengeRows.set(row.id, { ...row });
      return true;
    },
    findByMessageHash: async (hash) =>
      [...this.challengeRows.values()].find((c) => c.message_hash === hash) ?? null,
    consumeLive: async (hash, e) => {
      const row = [...this.challengeRows.values()].find((c) => c.message_hash === hash);
      const live = row && !row.consumed_at && row.expires_at > e.now;
      if (!live || row.purpose !== e.purpose || row.brand_id !== e.brandId) return null;
      row.consumed_at = e.now;
      return { ...row };
    },
    consumeForSignIn: async (hash, e) => {
      const row = [...this.challengeRows.values()].find((c) => c.message_hash === hash);
      if (!row || row.address !== e.address) return null;
      const challenge = await this.walletChallenges.consumeLive(hash, e);
      return challenge && { challenge, ownerId: this.liveHolder(this.wallets.get(e.address)) };
    },
    consume: async (id, now) => {
      const row = this.challengeRows.get(id);
      if (!row || row.consumed_at) return false;
      row.consumed_at = now;
      return true;
    },
    deleteOfUser: async (userId) => {
      deleteWhere(this.challengeRows, (c) => c.user_id === userId);
    },
    deleteExpired: async (now) => deleteWhere(this.challengeRows, (c) => c.expires_at < now),
  };

  providerStates: ProviderStateStore = {
    insert: async (row) => {
      const full = {
        binding_hash: null,
        consumed_at: null,
        pending_link_enc: null,
        confirmed_at: null,
        ...row,
      };
      this.stateRows.set(row.id, full);
    },
    findLive: async (input) => {
      const brand = [...this.brandRows.values()].find((b) => b.oauthCallbackId === input.oauthCallbackId);
      const live = (s: ProviderStateRow) =>
        s.state_hash === input.stateHash &&
        s.provider === input.provider &&
        !s.consumed_at &&
        s.expires_at > input.now &&
        s.brand_id === brand?.id;
      return [...this.stateRows.values()].find(live) ?? null;
    },
    consume: async ({ id, now }) => {
      const row = this.stateRows.get(id);
      if (!row || row.consumed_at || row.expires_at <= now) return null;
      row.consumed_at = now;
      return { ...row };
    },
    holdPendingLink: async (id, sealed) => {
      const row = this.stateRows.get(id);
      if (row) row.pending_link_enc = sealed;
    },
    findPendingLink: async (id, now) => {
      const row = this.stateRows.get(id);
      const waiting = row?.purpose === 'link' && row.consumed_at && !row.confirmed_at && row.pending_link_enc;
      return row && waiting && row.expires_at > now ? { ...row } : null;
    },
    answerPendingLink: async (id, now) => {
      const row = this.stateRows.get(id);
      if (!row || row.confirmed_at || !row.pending_link_enc || row.expires_at <= now) return false;
      Object.assign(row, { confirmed_at: now, pending_link_enc: null });
      return true;
    },
    findTelegramLink: async () => null,
    deleteExpired: async (now) => deleteWhere(this.stateRows, (s) => s.expires_at < now),
  };

  accounts: AccountStore = {
    create: async (fields) => {
      const now = this.clock.now();
      const user = newUser(now, fields.username ?? null);
      if (user.username && [...this.users.values()].some((u) => u.username === user.username))
        user.username = null;
      this.users.set(user.id, user);
      return user;
    },
    restoreIfInGrace: async (identity) => {
      const userId = this.deletedIdentities.get(identityHash(identity));
      const user = userId ? this.users.get(userId) : undefined;
      if (!user?.deleted_at) return null;
      user.deleted_at = null;
      for (const [h, id] of this.deletedIdentities) if (id === user.id) this.deletedIdentities.delete(h);
      return user.id;
    },
    discard: async (userId) => {
      this.users.delete(userId);
    },
    touch: async (userId) => {
      const user = this.users.get(userId);
      if (user) user.last_seen = this.clock.now();
    },
    lockLive: async (userId) => this.users.get(userId)?.deleted_at === null,
    walletOwner: async (address) => this.liveHolder(this.wallets.get(address)),
    touchWallet: async () => {},
    touchWalletOwner: async (address) => this.liveHolder(this.wallets.get(address)),
    insertPrimaryWallet: async (input) => {
      if (this.wallets.has(input.address)) return false;
      this.wallets.set(input.address, input.userId);
      return true;
    },
    linkedUser: async (provider, externalUserId) =>
      this.liveHolder(this.links.get(`${provider}:${externalUserId}`)),
    saveOAuthLink: async (input) => {
      const key = `${input.provider}:${input.externalUserId}`;
      const holder = this.links.get(key);
      if (holder && holder !== input.userId) return null;
      this.links.set(key, input.userId);
      this.linkBrands.set(key, input.brandId);
      return `oal_${key}`;
    },
    adoptLegacyLink: async (input) => {
      const legacy = `${input.provider}:${input.legacyExternalUserId}`;
      const holder = this.liveHolder(this.links.get(legacy));
      if (!holder || this.linkBrands.get(legacy) !== input.brandId) return null;
      this.links.delete(legacy);
      this.linkBrands.delete(legacy);
      this.links.set(`${input.provider}:${input.externalUserId}`, holder);
      this.linkBrands.set(`${input.provider}:${input.externalUserId}`, input.brandId);
      return holder;
    },
    oauthLink: async () => null,
    describe: async (userId) => {
      const user = this.users.get(userId);
      if (!user) return null;
      const wallet = [...this.wallets].find(([, id]) => id === userId)?.[0] ?? null;
      return {
        id: user.id,
        username: user.username,
        firstName: user.first_name,
        lastName: user.last_name,
        email: user.email,
        wallet,
        deleted: user.deleted_at !== null,
      };
    },
    recordActivity: async (input) => {
      this.activity.push(input);
    },
  };

  brands = {
    presentation: async (brandId: string) => this.brandRows.get(brandId) ?? null,
    page: async (brandId: string) => {
      const b = this.brandRows.get(brandId);
      return b ? { name: b.name, logoUrl: b.logoUrl, primaryColor: b.primaryColor } : null;
    },
    callbackId: async (brandId: string) => {
      const b = this.brandRows.get(brandId);
      return b ? { id: b.id, oauthCallbackId: b.oauthCallbackId } : null;
    },
    scopeDescriptions: async () => new Map<string, string>(),
  };

  connections = {
    credentials: async () => null,
    enabledTypes: async () => [],
  };

  readonly codeRows: AuthorizationCodeRow[] = [];
  codes = {
    insert: async (row: AuthorizationCodeRow) => {
      this.codeRows.push({ ...row });
    },
  };

  async finishSignIn(f: Parameters<SigninStores['finishSignIn']>[0]): Promise<boolean> {
    const { session: s } = f;
    const signedIn = { userId: s.userId, sessionId: s.id, authTime: s.authTime };
    if (!(await this.interactions.completeSignedIn(f.interactionId, signedIn, f.now))) return false;
    await this.sessions.insert(s);
    await this.codes.insert(f.code);
    await this.accounts.recordActivity(f.activity);
    return true;
  }

  async signInWithWallet(f: Parameters<SigninStores['signInWithWallet']>[0]) {
    if (!(await this.interactions.findLive(f.interactionId, f.now))) return null;
    const expected = { purpose: 'signin', brandId: f.brandId, address: f.address, now: f.now };
    const consumed = await this.walletChallenges.consumeForSignIn(f.messageHash, expected);
    if (!consumed) return null;
    const { ownerId } = consumed;
    if (!ownerId) return { ownerId, finished: false };
    const finished = await this.finishSignIn({
      session: { ...f.session, userId: ownerId },
      interactionId: f.interactionId,
      code: { ...f.code, user_id: ownerId },
      activity: { ...f.activity, userId: ownerId },
      now: f.now,
    });
    return { ownerId, finished };
  }

  atomic<T>(fn: (tx: SigninStores) => Promise<T>): Promise<T> {
    return fn(this);
  }

  on(): SigninStores {
    return this;
  }

  private liveHolder(userId: string | undefined): string | null {
    return userId && this.users.get(userId)?.deleted_at === null ? userId : null;
  }
}

function deleteWhere<V>(map: Map<string, V>, test: (v: V) => boolean): number {
  let n = 0;
  for (const [k, v] of map)
    if (test(v)) {
      map.delete(k);
      n++;
    }
  return n;
}

function newUser(now: Date, username: string | null): UserRow {
  return {
    id: newId('usr_'),
    username,
    first_name: null,
    last_name: null,
    preferred_language: null,
    phone_country_code: null,
    phone_number: null,
    profile_picture_id: null,
    external_profile_picture_url: null,
    email: null,
    email_verified: false,
    last_seen: now,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
}
