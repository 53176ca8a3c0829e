import { defaults } from '../config/defaults.js';

/** The SPL Token program, which owns classic mints and their token accounts. */
export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** The Token-2022 (token extensions) program. */
export const TOKEN_2022_PROGRAM_ID = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]);

/**
 * The node answered with an error, a non-2xx status, or a body that is not the JSON-RPC response we
 * asked for. Callers must not guess an answer from it (the gate check turns it into 502).
 */
export class SolanaRpcError extends Error {
  constructor(
    message: string,
    /** The JSON-RPC error code when the node sent one. */
    readonly rpcCode?: number,
  ) {
    super(message);
    this.name = 'SolanaRpcError';
  }
}

/** The node did not answer within the timeout (the gate check turns it into 504). */
export class SolanaRpcTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`Solana RPC ${method} timed out after ${timeoutMs} ms`);
    this.name = 'SolanaRpcTimeoutError';
  }
}

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface SolanaRpcOptions {
  url: string;
  /** Per request, covering the whole exchange (connect, send, read the body). */
  timeoutMs?: number;
  commitment?: Commitment;
}

export interface AccountInfo {
  lamports: number;
  owner: string;
  executable: boolean;
}

export interface TokenAccount {
  /** The token account's own address. */
  pubkey: string;
  /** The token program that owns it (SPL Token or Token-2022). */
  program: string;
  mint: string;
  owner: string;
  /** Raw units. */
  amount: bigint;
  /** The mint's decimals as the node reported them with the amount (undefined when it did not). */
  decimals?: number;
}

/** An account read with getMultipleAccounts: its lamports, owner program and data bytes. */
export interface RawAccount {
  lamports: bigint;
  owner: string;
  data: Uint8Array;
}

/** An asset as the DAS `getAssetsByOwner` method describes it (the fields the gates read). */
export interface DasAsset {
  id: string;
  interface: string;
  compressed: boolean;
  /** The verified collection it belongs to, when any. */
  collection: string | null;
}

/** getMultipleAccounts takes at most this many addresses per call. */
export const MULTIPLE_ACCOUNTS_MAX = 100;

export interface MintInfo {
  /** The token program that owns the mint (SPL Token or Token-2022). */
  program: string;
  decimals: number;
  /** Raw units, when the node reported it. */
  supply?: string;
}

export interface TokenBalance {
  /**
   * False when the owner has no token account for the mint and no account of its own on chain (never
   * funded, or closed): an address the chain does not know.
   */
  walletFound: boolean;
  /** Sum over every token account of the owner for the mint, in raw units (0n when none). */
  amount: bigint;
  tokenAccounts: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const DIGITS = /^\d+$/;

/**
 * A small Solana JSON-RPC client over fetch: one request per call, a timeout per request, strict
 * checks on what comes back. Generic on purpose (gate checks, wallet lookups) and stateless apart
 * from its settings; callers add caching.
 */
export class SolanaRpc {
  readonly url: string;
  timeoutMs: number;
  readonly commitment: Commitment;
  private nextId = 1;

  constructor(opts: SolanaRpcOptions) {
    this.url = opts.url;
    this.timeoutMs = opts.timeoutMs ?? defaults.solanaRpcTimeoutMs;
    this.commitment = opts.commitment ?? 'confirmed';
  }

  /** One JSON-RPC call; returns `result` or throws SolanaRpcError / SolanaRpcTimeoutError. */
  async call<T = unknown>(method: string, params: unknown[]): Promise<T> {
    const id = this.nextId++;
    const timeoutMs = this.timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    let body: unknown;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal,
      });
      const text = await res.text();
      if (!res.ok) throw new SolanaRpcError(`Solana RPC ${method} answered HTTP ${res.status}`);
      try {
        body = JSON.parse(text);
      } catch {
        throw new SolanaRpcError(`Solana RPC ${method} answered with a body that is not JSON`);
      }
    } catch (err) {
      if (err instanceof SolanaRpcError) throw err;
      if (signal.aborted) throw new SolanaRpcTimeoutError(method, timeoutMs);
      throw new SolanaRpcError(`Solana RPC ${method} failed: ${(err as Error).message}`);
    }
    if (!isObject(body) || body.id !== id)
      throw new SolanaRpcError(`Solana RPC ${method} answered with an unexpected body`);
    if (isObject(body.error)) {
      const code = typeof body.error.code === 'number' ? body.error.code : undefined;
      const message = typeof body.error.message === 'string' ? body.error.message : 'error';
      throw new SolanaRpcError(`Solana RPC ${method} error ${code ?? ''}: ${message}`.trim(), code);
    }
    if (!('result' in body)) throw new SolanaRpcError(`Solana RPC ${method} answered without a result`);
    return body.result as T;
  }

  /**
   * The account at `address`, or null when the chain has no account there. Asks for no data bytes
   * (dataSlice length 0): only existence, lamports and owner.
   */
  async getAccountInfo(address: string): Promise<AccountInfo | null> {
    const result = await this.call<unknown>('getAccountInfo', [
      address,
      { commitment: this.commitment, encoding: 'base64', dataSlice: { offset: 0, length: 0 } },
    ]);
    if (!isObject(result) || !('value' in result))
      throw new SolanaRpcError('Solana RPC getAccountInfo answered with an unexpected result');
    const v = result.value;
    if (v === null) return null;
    if (!isObject(v) || typeof v.lamports !== 'number' || typeof v.owner !== 'string')
      throw new SolanaRpcError('Solana RPC getAccountInfo answered with an unexpected account');
    return { lamports: v.lamports, owner: v.owner, executable: v.executable === true };
  }

  /**
   * The mint at `address` (jsonParsed): its token program and decimals, and the supply in raw units.
   * Null when the chain has no account there or the account is not a mint of a token program.
   */
  async getMint(address: string): Promise<MintInfo | null> {
    const result = await this.call<unknown>('getAccountInfo', [
      address,
      { commitment: this.commitment, encoding: 'jsonParsed' },
    ]);
    if (!isObject(result) || !('value' in result))
      throw new SolanaRpcError('Solana RPC getAccountInfo answered with an unexpected result');
    const v = result.value;
    if (v === null) return null;
    if (!isObject(v) || typeof v.owner !== 'string')
      throw new SolanaRpcError('Solana RPC getAccountInfo answered with an unexpected account');
    if (!TOKEN_PROGRAMS.has(v.owner)) return null;
    const data = isObject(v.data) && isObject(v.data.parsed) ? v.data.parsed : undefined;
    if (data?.type !== 'mint') return null;
    const info = isObject(data.info) ? data.info : undefined;
    const decimals = info?.decimals;
    if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255)
      throw new SolanaRpcError('Solana RPC returned a mint with unreadable decimals');
    const supply = typeof info?.supply === 'string' && DIGITS.test(info.supply) ? info.supply : undefined;
    return { program: v.owner, decimals, supply };
  }

  /**
   * The token accounts `owner` holds, filtered by mint or by token program. With `{ mint }` the node
   * finds which token program owns the mint (SPL Token or Token-2022) and searches that program's
   * accounts, so one call covers both programs; a mint that does not exist is an RPC error.
   */
  async getTokenAccountsByOwner(
    owner: string,
    filter: { mint: string } | { programId: string },
  ): Promise<TokenAccount[]> {
    const result = await this.call<unknown>('getTokenAccountsByOwner', [
      owner,
      filter,
      { commitment: this.commitment, encoding: 'jsonParsed' },
    ]);
    if (!isObject(result) || !Array.isArray(result.value))
      throw new SolanaRpcError('Solana RPC getTokenAccountsByOwner answered with an unexpected result');
    return result.value.map((item) => parseTokenAccount(item, owner, filter));
  }

  /**
   * Up to MULTIPLE_ACCOUNTS_MAX accounts in one call (base64), in the order asked; null where the
   * chain has no account.
   */
  async getMultipleAccounts(addresses: string[]): Promise<Array<RawAccount | null>> {
    if (addresses.length > MULTIPLE_ACCOUNTS_MAX)
      throw new RangeError(`getMultipleAccounts takes at most ${MULTIPLE_ACCOUNTS_MAX} addresses`);
    const result = await this.call<unknown>('getMultipleAccounts', [
      addresses,
      { commitment: this.commitment, encoding: 'base64' },
    ]);
    if (!isObject(result) || !Array.isArray(result.value) || result.value.length !== addresses.length)
      throw new SolanaRpcError('Solana RPC getMultipleAccounts answered with an unexpected result');
    return result.value.map((v) => {
      if (v === null) return null;
      if (
        !isObject(v) ||
        typeof v.lamports !== 'number' ||
        typeof v.owner !== 'string' ||
        !Array.isArray(v.data) ||
        typeof v.data[0] !== 'string'
      )
        throw new SolanaRpcError('Solana RPC getMultipleAccounts answered with an unexpected account');
      return { lamports: BigInt(v.lamports), owner: v.owner, data: Buffer.from(v.data[0], 'base64') };
    });
  }

  /**
   * Every asset `owner` holds, by the Digital Asset Standard API (`getAssetsByOwner`, offered by some
   * RPC providers), page by page. A node without it answers a JSON-RPC error (-32601).
   */
  async getAssetsByOwner(owner: string): Promise<DasAsset[]> {
    const assets: DasAsset[] = [];
    const limit = 1000;
    for (let page = 1; page <= 50; page++) {
      const result = await this.call<unknown>('getAssetsByOwner', [{ ownerAddress: owner, page, limit }]);
      if (!isObject(result) || !Array.isArray(result.items))
        throw new SolanaRpcError('Solana RPC getAssetsByOwner answered with an unexpected result');
      for (const item of result.items) assets.push(parseDasAsset(item));
      if (result.items.length < limit) return assets;
    }
    return assets;
  }

  /**
   * What `owner` holds of `mint`: the sum of its token accounts' raw amounts (BigInt, exact at any
   * size). When it has none, one more call tells an unknown address (walletFound false) from a
   * known one holding nothing.
   */
  async getTokenBalance(owner: string, mint: string): Promise<TokenBalance> {
    const accounts = await this.getTokenAccountsByOwner(owner, { mint });
    if (accounts.length > 0) {
      const amount = accounts.reduce((sum, a) => sum + a.amount, 0n);
      return { walletFound: true, amount, tokenAccounts: accounts.length };
    }
    const info = await this.getAccountInfo(owner);
    return { walletFound: info !== null, amount: 0n, tokenAccounts: 0 };
  }
}

/** Checks one keyed account of a jsonParsed token-account list; anything unexpected is an error, not a guess. */
function parseTokenAccount(
  item: unknown,
  owner: string,
  filter: { mint: string } | { programId: string },
): TokenAccount {
  const bad = (why: string) => new SolanaRpcError(`Solana RPC returned a token account ${why}`);
  if (!isObject(item) || typeof item.pubkey !== 'string' || !isObject(item.account))
    throw bad('without a key');
  const program = item.account.owner;
  if (typeof program !== 'string' || !TOKEN_PROGRAMS.has(program)) throw bad('not owned by a token program');
  if ('programId' in filter && program !== filter.programId) throw bad('of another program');
  const data = item.account.data;
  const parsed = isObject(data) && isObject(data.parsed) ? data.parsed : undefined;
  const info = parsed && isObject(parsed.info) ? parsed.info : undefined;
  const tokenAmount = info && isObject(info.tokenAmount) ? info.tokenAmount : undefined;
  if (!info || !tokenAmount) throw bad('that is not jsonParsed');
  if (info.owner !== owner) throw bad('of another owner');
  if (typeof info.mint !== 'string' || ('mint' in filter && info.mint !== filter.mint))
    throw bad('of another mint');
  if (typeof tokenAmount.amount !== 'string' || !DIGITS.test(tokenAmount.amount))
    throw bad('with an unreadable amount');
  const decimals = tokenAmount.decimals;
  if (decimals !== undefined && (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0))
    throw bad('with unreadable decimals');
  return {
    pubkey: item.pubkey,
    program,
    mint: info.mint,
    owner,
    amount: BigInt(tokenAmount.amount),
    ...(decimals !== undefined ? { decimals: decimals as number } : {}),
  };
}

/** The fields of a DAS asset the gates read; a verified collection grouping, if any. */
function parseDasAsset(item: unknown): DasAsset {
  if (!isObject(item) || typeof item.id !== 'string')
    throw new SolanaRpcError('Solana RPC getAssetsByOwner returned an asset without an id');
  const grouping = Array.isArray(item.grouping) ? item.grouping : [];
  const group = grouping.find(
    (g) => isObject(g) && g.group_key === 'collection' && typeof g.group_value === 'string',
  ) as Record<string, unknown> | undefined;
  // Providers list verified collections only, or mark unverified ones `verified: false`.
  const collection = group && group.verified !== false ? (group.group_value as string) : null;
  const compression = isObject(item.compression) ? item.compression : {};
  return {
    id: item.id,
    interface: typeof item.interface === 'string' ? item.interface : '',
    compressed: compression.compressed === true,
    collection,
  };
}
