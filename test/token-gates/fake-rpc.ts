import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { type Address, getAddressEncoder } from '@solana/addresses';
import {
  addEncoderSizePrefix,
  getBooleanEncoder,
  getOptionEncoder,
  getStructEncoder,
  getU8Encoder,
  getU16Encoder,
  getU32Encoder,
  getUtf8Codec,
  none,
  some,
} from '@solana/codecs';
import { metadataAddress, TOKEN_METADATA_PROGRAM_ID, WRAPPED_SOL_MINT } from '../../src/solana/metadata.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../src/solana/rpc.js';

export type TokenProgram = 'spl-token' | 'spl-token-2022';
const PROGRAM_IDS: Record<TokenProgram, string> = {
  'spl-token': TOKEN_PROGRAM_ID,
  'spl-token-2022': TOKEN_2022_PROGRAM_ID,
};

/** A random valid Solana address. */
export function randomAddress(): string {
  return bs58.encode(randomBytes(32));
}

/**
 * How the next calls are answered: normally, with a JSON-RPC error, an HTTP 500, a body that is
 * not JSON-RPC, or not at all (to hit the client's timeout).
 */
export type FakeMode = 'ok' | 'rpcError' | 'http500' | 'garbage' | 'hang';

/**
 * A Solana JSON-RPC node on 127.0.0.1 for tests and the benchmark: mints of either token program,
 * token accounts per (owner, mint), wallets that exist on chain, and a count of calls.
 */
export class FakeSolanaRpc {
  readonly server: Server;
  url = '';
  mode: FakeMode = 'ok';
  /** Calls answered, by method. */
  readonly calls = new Map<string, number>();
  private readonly mints = new Map<string, TokenProgram>();
  private readonly decimals = new Map<string, number>();
  private readonly wallets = new Map<string, number>();
  private readonly accounts = new Map<string, Array<{ mint: string; amount: string; pubkey: string }>>();
  /** Metaplex metadata accounts by their address (base64 of the Borsh bytes). */
  private readonly metadata = new Map<string, string>();
  /** Assets the DAS method lists, per owner. */
  private readonly assets = new Map<string, Array<{ id: string; collection: string; verified: boolean }>>();
  /** Whether the node answers the DAS `getAssetsByOwner` method (off: "Method not found"). */
  das = false;
  /** Milliseconds each answer waits (the benchmark's network). */
  latencyMs = 0;
  /** Most requests of each method in flight at once, seen so far. */
  readonly mostInFlight = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private held: Array<() => void> | null = null;
  private readonly hanging = new Set<ServerResponse>();

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get totalCalls(): number {
    let n = 0;
    for (const v of this.calls.values()) n += v;
    return n;
  }

  resetCalls(): void {
    this.calls.clear();
  }

  addMint(program: TokenProgram = 'spl-token', decimals = 6): string {
    const mint = randomAddress();
    this.mints.set(mint, program);
    this.decimals.set(mint, decimals);
    return mint;
  }

  /** A wallet that exists on chain (holds lamports). */
  addWallet(address = randomAddress(), lamports = 1_000_000): string {
    this.wallets.set(address, lamports);
    return address;
  }

  /** Sets the native lamports of a wallet (creating it on chain). */
  setLamports(address: string, lamports: number): void {
    this.wallets.set(address, lamports);
  }

  /**
   * An NFT of `owner`: a classic 0-decimal mint, a token account holding 1 of it, and its Metaplex
   * metadata account naming `collection` (verified or not). Listed by DAS too. Returns the mint.
   */
  async addNft(owner: string, collection: string | null, verified = true): Promise<string> {
    const mint = this.addMint('spl-token', 0);
    this.addTokenAccount(owner, mint, 1n);
    const pda = await metadataAddress(mint);
    this.metadata.set(pda, encodeMetadata(mint, collection, verified));
    if (collection) {
      const list = this.assets.get(owner) ?? [];
      list.push({ id: mint, collection, verified });
      this.assets.set(owner, list);
    }
    return mint;
  }

  /** Registers the wrapped-SOL mint (a classic mint with 9 decimals). */
  addWrappedSolMint(): string {
    this.mints.set(WRAPPED_SOL_MINT, 'spl-token');
    this.decimals.set(WRAPPED_SOL_MINT, 9);
    return WRAPPED_SOL_MINT;
  }

  /** Adds a token account of `owner` for `mint` holding `amount` raw units. */
  addTokenAccount(owner: string, mint: string, amount: string | bigint): void {
    const list = this.accounts.get(owner) ?? [];
    list.push({ mint, amount: amount.toString(), pubkey: randomAddress() });
    this.accounts.set(owner, list);
  }

  /** Replaces every token account of `owner` for `mint` with one holding `amount`. */
  setBalance(owner: string, mint: string, amount: string | bigint): void {
    this.accounts.set(
      owner,
      (this.accounts.get(owner) ?? []).filter((a) => a.mint !== mint),
    );
    this.addTokenAccount(owner, mint, amount);
  }

  /** Holds every answer until `release()`: concurrent requests pile up meanwhile. */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const go of waiting) go();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: number;
      method: string;
      params: unknown[];
    };
    this.calls.set(body.method, (this.calls.get(body.method) ?? 0) + 1);
    const now = (this.inFlight.get(body.method) ?? 0) + 1;
    this.inFlight.set(body.method, now);
    this.mostInFlight.set(body.method, Math.max(now, this.mostInFlight.get(body.method) ?? 0));
    res.on('close', () => this.inFlight.set(body.method, (this.inFlight.get(body.method) ?? 1) - 1));
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    if (this.held) await new Promise<void>((go) => this.held?.push(go));
    const send = (status: number, payload: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(payload);
    };
    switch (this.mode) {
      case 'hang':
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      case 'http500':
        return send(500, '{"message":"internal"}');
      case 'garbage':
        return send(200, JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { value: 'nonsense' } }));
      case 'rpcError':
        return send(
          200,
          JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32005, message: 'Node is behind' } }),
        );
    }
    const ok = (result: unknown) => send(200, JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
    const fail = (code: number, message: string) =>
      send(200, JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code, message } }));
    const context = { slot: 1, apiVersion: '2.2.0' };
    if (body.method === 'getAccountInfo') {
      const [address, config] = body.params as [string, { encoding?: string }];
      const mintProgram = this.mints.get(address);
      if (mintProgram) {
        // A mint account, as a node answers it (jsonParsed, or opaque bytes otherwise).
        const parsed = {
          program: mintProgram,
          space: 82,
          parsed: {
            type: 'mint',
            info: {
              decimals: this.decimals.get(address) ?? 6,
              freezeAuthority: null,
              isInitialized: true,
              mintAuthority: null,
              supply: '1000000000000',
            },
          },
        };
        return ok({
          context,
          value: {
            lamports: 1_461_600,
            owner: PROGRAM_IDS[mintProgram],
            executable: false,
            rentEpoch: 0,
            data: config?.encoding === 'jsonParsed' ? parsed : ['', 'base64'],
            space: 82,
          },
        });
      }
      const exists = this.wallets.has(address);
      return ok({
        context,
        value: exists
          ? {
              lamports: this.wallets.get(address),
              owner: '11111111111111111111111111111111',
              executable: false,
              rentEpoch: 0,
              data: ['', 'base64'],
              space: 0,
            }
          : null,
      });
    }
    if (body.method === 'getTokenAccountsByOwner') {
      const [owner, filter, config] = body.params as [
        string,
        { mint?: string; programId?: string },
        { encoding?: string },
      ];
      const byProgram = Object.entries(PROGRAM_IDS).find(([, id]) => id === filter.programId)?.[0];
      if (!filter.mint && !byProgram) return fail(-32602, 'Invalid param: unknown filter');
      if (filter.mint && !this.mints.get(filter.mint))
        return fail(-32602, 'Invalid param: could not find mint');
      if (config?.encoding !== 'jsonParsed')
        return fail(-32602, 'Invalid param: this fake answers jsonParsed only');
      const value = (this.accounts.get(owner) ?? [])
        .filter((a) => (filter.mint ? a.mint === filter.mint : this.mints.get(a.mint) === byProgram))
        .map((a) => ({
          pubkey: a.pubkey,
          account: {
            lamports: 2_039_280,
            owner: PROGRAM_IDS[this.mints.get(a.mint) as TokenProgram],
            executable: false,
            rentEpoch: 0,
            space: 165,
            data: {
              program: this.mints.get(a.mint),
              space: 165,
              parsed: {
                type: 'account',
                info: {
                  isNative: false,
                  mint: a.mint,
                  owner,
                  state: 'initialized',
                  tokenAmount: {
                    amount: a.amount,
                    decimals: this.decimals.get(a.mint) ?? 6,
                    uiAmount: Number(a.amount) / 1e6,
                    uiAmountString: '',
                  },
                },
              },
            },
          },
        }));
      return ok({ context, value });
    }
    if (body.method === 'getMultipleAccounts') {
      const [addresses] = body.params as [string[]];
      if (addresses.length > 100) return fail(-32602, 'Too many inputs provided; max 100');
      const value = addresses.map((a) => {
        const meta = this.metadata.get(a);
        if (meta)
          return {
            lamports: 5_616_720,
            owner: TOKEN_METADATA_PROGRAM_ID,
            executable: false,
            rentEpoch: 0,
            data: [meta, 'base64'],
            space: 679,
          };
        if (this.wallets.has(a))
          return {
            lamports: this.wallets.get(a),
            owner: '11111111111111111111111111111111',
            executable: false,
            rentEpoch: 0,
            data: ['', 'base64'],
            space: 0,
          };
        return null;
      });
      return ok({ context, value });
    }
    if (body.method === 'getAssetsByOwner' && this.das) {
      const [{ ownerAddress, page }] = body.params as [{ ownerAddress: string; page: number }];
      const items =
        page > 1
          ? []
          : (this.assets.get(ownerAddress) ?? []).map((a) => ({
              id: a.id,
              interface: 'V1_NFT',
              compression: { compressed: false },
              grouping: [{ group_key: 'collection', group_value: a.collection, verified: a.verified }],
              ownership: { owner: ownerAddress },
            }));
      return ok({ total: items.length, limit: 1000, page, items });
    }
    return fail(-32601, 'Method not found');
  }
}

/** A Metaplex MetadataV1 account's Borsh bytes (base64), with mpl-token-metadata's field order. */
function encodeMetadata(mint: string, collection: string | null, verified: boolean): string {
  const str = getUtf8Codec();
  const borshString = addEncoderSizePrefix(str, getU32Encoder());
  const addr = getAddressEncoder();
  const encoder = getStructEncoder([
    ['key', getU8Encoder()],
    ['updateAuthority', addr],
    ['mint', addr],
    ['name', borshString],
    ['symbol', borshString],
    ['uri', borshString],
    ['sellerFeeBasisPoints', getU16Encoder()],
    ['creators', getOptionEncoder(getU8Encoder())],
    ['primarySaleHappened', getBooleanEncoder()],
    ['isMutable', getBooleanEncoder()],
    ['editionNonce', getOptionEncoder(getU8Encoder())],
    ['tokenStandard', getOptionEncoder(getU8Encoder())],
    [
      'collection',
      getOptionEncoder(
        getStructEncoder([
          ['verified', getBooleanEncoder()],
          ['key', addr],
        ]),
      ),
    ],
    ['uses', getOptionEncoder(getU8Encoder())],
  ]);
  const bytes = encoder.encode({
    key: 4,
    updateAuthority: randomAddress() as Address,
    mint: mint as Address,
    name: 'Test NFT'.padEnd(32, '\0'),
    symbol: 'TST'.padEnd(10, '\0'),
    uri: 'https://example.com/nft.json'.padEnd(200, '\0'),
    sellerFeeBasisPoints: 500,
    creators: none(),
    primarySaleHappened: false,
    isMutable: true,
    editionNonce: some(254),
    tokenStandard: some(0),
    collection: collection ? some({ verified, key: collection as Address }) : none(),
    uses: none(),
  });
  return Buffer.from(bytes).toString('base64');
}
