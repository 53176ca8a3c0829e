import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../src/context.js';
import type { Clock } from '../../src/lib/clock.js';
import { Encryptor } from '../../src/lib/encryption.js';
import type { Client } from '../../src/oidc/clients.js';
import { unwiredGatePolicies } from '../../src/oidc/gates.js';
import { KeyStore } from '../../src/oidc/keys.js';
import type {
  AuthorizationCodeRow,
  ConsentGrantRow,
  DeviceRow,
  EngineStores,
  FamilyFilter,
  RefreshTokenRow,
  SigningKeyRow,
  SigningKeyStore,
  TokenEvent,
  Tx,
  UserProfileRow,
} from '../../src/oidc/stores.js';
import type { Mutation } from '../../src/events/outbox.js';

/** What the in-memory stores hold, open to the tests' assertions. */
export interface MemoryData {
  clients: Map<string, Client>;
  codes: Map<string, AuthorizationCodeRow>;
  refresh: Map<string, RefreshTokenRow>;
  access: Map<
    string,
    { familyId: string; clientId: string; userId: string; expiresAt: Date; sessionId?: string | null }
  >;
  revoked: Map<string, Date>;
  devices: Map<string, DeviceRow>;
  consent: Map<string, ConsentGrantRow>;
  keys: SigningKeyRow[];
  users: Map<string, UserProfileRow & { deleted?: boolean }>;
  wallets?: Map<string, Array<{ address: string; isPrimary: boolean }>>;
  /** Every mutation recorded, and every batched token event. */
  mutations: Mutation[];
  tokenEvents: TokenEvent[];
  activity: Array<{ userId: string; ip?: string }>;
}

const matches = (
  row: { family_id: string; user_id: string; client_id: string; session_id?: string | null },
  f: FamilyFilter,
) =>
  (!f.familyId || row.family_id === f.familyId) &&
  (!f.userId || row.user_id === f.userId) &&
  (!f.clientId || row.client_id === f.clientId) &&
  (!f.sessionId || row.session_id === f.sessionId);

function signingKeys(data: MemoryData): SigningKeyStore {
  const store: SigningKeyStore = {
    list: async () => [...data.keys].sort((a, b) => b.created_at.getTime() - a.created_at.getTime()),
    withCreationLock: (fn) => fn(store),
    async insert(row) {
      data.keys.push({ ...row, retired_at: null });
    },
    async insertScheduled(row) {
      for (const k of data.keys) k.retired_at ??= row.activates_at;
      data.keys.push({ ...row, retired_at: null });
    },
  };
  return store;
}

function revocations(data: MemoryData): EngineStores['revocations'] {
  const revokeFamilies = async (_tx: Tx | undefined, filter: FamilyFilter, now: Date) => {
    for (const row of data.refresh.values())
      if (!row.revoked_at && matches(row, filter)) row.revoked_at = now;
    for (const [jti, a] of data.access) {
      const row = {
        family_id: a.familyId,
        user_id: a.userId,
        client_id: a.clientId,
        session_id: a.sessionId,
      };
      if (a.expiresAt > now && matches(row, filter) && !data.revoked.has(jti))
        data.revoked.set(jti, a.expiresAt);
    }
  };
  return {
    async recordAccessToken(_tx, row) {
      data.access.set(row.jti, row);
    },
    revokeFamilies,
    async burnCodesOfUser(_tx, userId, now) {
      for (const c of data.codes.values()) if (c.user_id === userId && !c.consumed_at) c.consumed_at = now;
    },
    async burnCodesOfSessions(_tx, sessionIds, now) {
      for (const c of data.codes.values())
        if (c.session_id && sessionIds.includes(c.session_id) && !c.consumed_at) c.consumed_at = now;
    },
    async revokeAccessToken(_tx, jti, expiresAt) {
      if (!data.revoked.has(jti)) data.revoked.set(jti, expiresAt);
    },
    async isRevoked(_tx, jti) {
      return data.revoked.has(jti);
    },
    async tokenState(jti, userId) {
      const user = userId === null ? undefined : data.users.get(userId);
      return { revoked: data.revoked.has(jti), live: !!user && !user.deleted };
    },
    async sweep(now) {
      const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000);
      for (const [k, c] of data.codes) if (c.expires_at < dayAgo) data.codes.delete(k);
      for (const [k, d] of data.devices) if (d.expires_at < now) data.devices.delete(k);
      for (const [k, exp] of data.revoked) if (exp < now) data.revoked.delete(k);
      for (const [k, a] of data.access) if (a.expiresAt < now) data.access.delete(k);
      for (const [k, r] of data.refresh)
        if ((r.expires_at < now || r.revoked_at) && r.created_at < dayAgo) data.refresh.delete(k);
    },
  };
}

function devices(data: MemoryData): EngineStores['devices'] {
  const pending = (hash: string, now: Date) =>
    [...data.devices.values()].find(
      (d) => d.user_code_hash === hash && d.status === 'pending' && d.expires_at > now,
    ) ?? null;
  return {
    async insert(row) {
      if ([...data.devices.values()].some((d) => d.user_code_hash === row.user_code_hash)) return false;
      data.devices.set(row.id, { ...row });
      return true;
    },
    findByDeviceCode: async (hash) =>
      [...data.devices.values()].find((d) => d.device_code_hash === hash) ?? null,
    findPending: async (hash, now) => pending(hash, now),
    async decide(hash, now, decision) {
      const row = pending(hash, now);
      if (!row) return false;
      row.status = decision.status;
      if (decision.status === 'denied') row.denial = decision.denial ?? null;
      if (decision.status === 'approved') {
        row.user_id = decision.userId;
        row.auth_time = decision.authTime;
      }
      return true;
    },
    async pollOnTime(id, now) {
      const row = data.devices.get(id)!;
      const due =
        !row.last_polled_at || row.last_polled_at.getTime() + row.poll_interval * 1000 <= now.getTime();
      if (due) row.last_polled_at = now;
      return due;
    },
    async slowDown(id, now, increment) {
      const row = data.devices.get(id)!;
      row.poll_interval += increment;
      row.last_polled_at = now;
    },
    async consumeApproved(id, now) {
      const row = data.devices.get(id);
      if (row?.status !== 'approved' || row.consumed_at) return null;
      row.consumed_at = now;
      return { ...row };
    },
  };
}

function consent(data: MemoryData): EngineStores['consent'] {
  const key = (userId: string, appId: string) => `${userId} ${appId}`;
  return {
    listOfUser: async (userId) =>
      [...data.consent.values()]
        .filter((g) => g.user_id === userId)
        .sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime() || (a.id < b.id ? 1 : -1)),
    find: async (_tx, userId, appId) =>
      [...data.consent.values()].find(
        (g) => g.user_id === userId && (g.app_id === appId || g.client_id === appId),
      ) ?? null,
    async insertIfAbsent(_tx, row) {
      if (data.consent.has(key(row.user_id, row.app_id))) return null;
      data.consent.set(key(row.user_id, row.app_id), { ...row });
      return row.id;
    },
    async lock(_tx, userId, appId) {
      const g = data.consent.get(key(userId, appId))!;
      return { id: g.id, scopes: g.scopes };
    },
    async setScopes(_tx, id, scopes, now) {
      const g = [...data.consent.values()].find((x) => x.id === id)!;
      g.scopes = scopes;
      g.updated_at = now;
    },
    async delete(_tx, userId, clientId) {
      for (const [k, g] of data.consent)
        if (g.user_id === userId && g.client_id === clientId) {
          data.consent.delete(k);
          return g;
        }
      return null;
    },
  };
}

/** An in-memory EngineStores: the engine's unit tests run on it with no database. */
export function memoryStores(): { stores: EngineStores; data: MemoryData } {
  const data: MemoryData = {
    clients: new Map(),
    codes: new Map(),
    refresh: new Map(),
    access: new Map(),
    revoked: new Map(),
    devices: new Map(),
    consent: new Map(),
    keys: [],
    users: new Map(),
    mutations: [],
    tokenEvents: [],
    activity: [],
  };
  const stores: EngineStores = {
    transaction: (fn) => fn({} as Tx),
    clients: { find: async (id) => data.clients.get(id) ?? null },
    codes: {
      async insert(row) {
        data.codes.set(row.code_hash, { ...row });
      },
      find: async (hash) => {
        const row = data.codes.get(hash);
        return row ? { ...row } : null;
      },
      async consumeMatching(hash, r, token) {
        const row = data.codes.get(hash);
        if (!row || row.consumed_at || row.expires_at <= r.now) return null;
        if (row.client_id !== r.clientId || row.redirect_uri !== r.redirectUri) return null;
        if (row.code_challenge !== r.codeChallenge) return null;
        row.consumed_at = r.now;
        if (token) {
          const { family_id: familyId, client_id: clientId, user_id: userId, session_id: sessionId } = row;
          data.access.set(token.jti, { familyId, clientId, userId, expiresAt: token.expiresAt, sessionId });
        }
        return { ...row };
      },
    },
    tokens: {
      findRefresh: async (hash) => {
        const row = [...data.refresh.values()].find((r) => r.token_hash === hash);
        return row ? { ...row } : null;
      },
      async consumeRefresh(id, now) {
        const row = data.refresh.get(id);
        if (!row || row.consumed_at || row.revoked_at) return null;
        row.consumed_at = now;
        return { ...row };
      },
      async findActiveRefresh(hash, now) {
        const r = [...data.refresh.values()].find((x) => x.token_hash === hash);
        const user = r && data.users.get(r.user_id);
        if (!r || r.consumed_at || r.revoked_at || r.expires_at <= now || !user || user.deleted) return null;
        return {
          clientId: r.client_id,
          userId: r.user_id,
          scopes: r.scopes,
          createdAt: r.created_at,
          expiresAt: r.expires_at,
        };
      },
      async insertRefresh(_tx, row) {
        data.refresh.set(row.id, { ...row });
        return true;
      },
    },
    revocations: revocations(data),
    devices: devices(data),
    consent: consent(data),
    signingKeys: signingKeys(data),
    accounts: {
      async profile(userId) {
        const u = data.users.get(userId);
        return u && !u.deleted ? u : null;
      },
      isLive: async (userId) => {
        const u = data.users.get(userId);
        return !!u && !u.deleted;
      },
      wallets: async (userId) => data.wallets?.get(userId) ?? [],
      async recordDeviceAuthorized(input) {
        data.activity.push(input);
      },
    },
    events: {
      wanted: async () => true,
      async record(_tx, m) {
        data.mutations.push(m);
      },
      async recordBatched(e) {
        data.tokenEvents.push(e);
      },
    },
    // Sessions are sign-in's (signin-memory-stores.ts); the engine's unit tests have none.
    sessionClients: { record: async () => {}, takeForClient: async () => [] },
    logoutDeliveries: { enqueue: async () => {} },
    introspectors: [],
    gatedScopes: { ofBrand: async () => new Map() },
    gatePolicies: unwiredGatePolicies,
  };
  return { stores, data };
}

/**
 * The part of the context the engine's grant, revocation and device functions read, on memory
 * stores: the issuer, the clock, the key set (made in memory) and no invalidation channel.
 */
export async function memoryEngine(clock: Clock): Promise<{ ctx: AppContext; data: MemoryData }> {
  const { stores, data } = memoryStores();
  const keys = new KeyStore(stores.signingKeys, new Encryptor(randomBytes(32)), clock);
  await keys.ensureKey();
  const ctx = {
    config: { issuer: 'https://issuer.test', baseUrl: 'https://issuer.test' },
    clock,
    keys,
    stores,
    // No channel to hear changes on: every cache reads through (as an instance whose channel is down).
    invalidation: { healthy: false, on: () => () => {} },
    hooks: { accessTokenChecks: [], onClose: [] },
  } as unknown as AppContext;
  ctx.verifyAccessToken = async () => null;
  return { ctx, data };
}
