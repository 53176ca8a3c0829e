import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
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
  private readonly wallets = new Set<string>();
  private readonly accounts = new Map<string, Array<{ mint: string; amount: string; pubkey: string }>>();
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
  addWallet(address = randomAddress()): string {
    this.wallets.add(address);
    return address;
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
              lamports: 1_000_000,
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
      const [owner, filter, config] = body.params as [string, { mint?: string }, { encoding?: string }];
      if (!filter.mint) return fail(-32602, 'Invalid param: this fake supports the mint filter only');
      const program = this.mints.get(filter.mint);
      if (!program) return fail(-32602, 'Invalid param: could not find mint');
      if (config?.encoding !== 'jsonParsed')
        return fail(-32602, 'Invalid param: this fake answers jsonParsed only');
      const value = (this.accounts.get(owner) ?? [])
        .filter((a) => a.mint === filter.mint)
        .map((a) => ({
          pubkey: a.pubkey,
          account: {
            lamports: 2_039_280,
            owner: PROGRAM_IDS[program],
            executable: false,
            rentEpoch: 0,
            space: 165,
            data: {
              program,
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
    return fail(-32601, 'Method not found');
  }
}
