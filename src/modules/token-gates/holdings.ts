import { defaults } from '../../config/defaults.js';
import type { TokenGateKind } from '../../db/schema.js';
import {
  decodeNftMetadata,
  metadataAddress,
  TOKEN_METADATA_PROGRAM_ID,
  WRAPPED_SOL_MINT,
} from '../../solana/metadata.js';
import {
  MULTIPLE_ACCOUNTS_MAX,
  type SolanaRpc,
  SolanaRpcError,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  type TokenAccount,
} from '../../solana/rpc.js';

/** What a gate counts for one wallet: whether the chain knows the wallet, and the amount. */
export interface Holding {
  walletFound: boolean;
  amount: bigint;
}

/** What a gate reads from the chain: its kind and mint. */
export interface GateTarget {
  kind: TokenGateKind;
  mintAddress: string;
}

/**
 * The balance cache key of a target: the mint for `token` (as before kinds existed), prefixed for
 * the others so that a collection mint's count never reads as a token balance.
 */
export function holdingKey(t: GateTarget): string {
  return t.kind === 'token' ? t.mintAddress : `${t.kind}:${t.mintAddress}`;
}

/** DAS answers a node without it with "method not found". */
const METHOD_NOT_FOUND = new Set([-32601, -32600]);

/** Which way collections were counted: the DAS method, or token accounts plus metadata accounts. */
export interface HoldingStats {
  dasReads: number;
  metadataScans: number;
}

/**
 * Reads holdings from the chain for the three gate kinds, one wallet (`readOne`) or many at once
 * (`readMany`: one getTokenAccountsByOwner per wallet and token program, getMultipleAccounts per
 * 100 accounts for wallets and metadata). Remembers whether the node offers DAS.
 */
export class HoldingsReader {
  /** Undefined until asked; false once the node said it has no getAssetsByOwner. */
  private das: boolean | undefined;
  readonly stats: HoldingStats = { dasReads: 0, metadataScans: 0 };

  constructor(readonly rpc: SolanaRpc) {}

  /** One wallet, one target. */
  async readOne(wallet: string, target: GateTarget): Promise<Holding> {
    if (target.kind === 'token') {
      const b = await this.rpc.getTokenBalance(wallet, target.mintAddress);
      return { walletFound: b.walletFound, amount: b.amount };
    }
    if (target.kind === 'sol') {
      const [info, wrapped] = await Promise.all([
        this.rpc.getAccountInfo(wallet),
        this.rpc.getTokenAccountsByOwner(wallet, { mint: WRAPPED_SOL_MINT }),
      ]);
      return {
        walletFound: info !== null || wrapped.length > 0,
        amount: BigInt(info?.lamports ?? 0) + sum(wrapped),
      };
    }
    const counts = await this.countCollections([wallet], [target.mintAddress]);
    const count = counts.get(wallet)?.get(target.mintAddress) ?? 0n;
    if (count > 0n) return { walletFound: true, amount: count };
    const info = await this.rpc.getAccountInfo(wallet);
    return { walletFound: info !== null, amount: 0n };
  }

  /**
   * Many wallets × targets in batches. Returns, per wallet, the holding of every target by
   * `holdingKey`.
   */
  async readMany(wallets: string[], targets: GateTarget[]): Promise<Map<string, Map<string, Holding>>> {
    const tokenMints = new Set(targets.filter((t) => t.kind === 'token').map((t) => t.mintAddress));
    const collections = [
      ...new Set(targets.filter((t) => t.kind === 'collection').map((t) => t.mintAddress)),
    ];
    const wantSol = targets.some((t) => t.kind === 'sol');
    const programs = [TOKEN_PROGRAM_ID, ...(tokenMints.size > 0 ? [TOKEN_2022_PROGRAM_ID] : [])];
    const needAccounts = tokenMints.size > 0 || wantSol || (collections.length > 0 && this.das !== true);
    const [accountsByWallet, walletAccounts] = await Promise.all([
      needAccounts
        ? Promise.all(wallets.map((w) => this.tokenAccounts(w, programs)))
        : Promise.resolve(wallets.map(() => [] as TokenAccount[])),
      this.walletAccounts(wallets),
    ]);
    const classic = new Map(
      wallets.map((w, i) => [w, (accountsByWallet[i] ?? []).filter((a) => a.program === TOKEN_PROGRAM_ID)]),
    );
    const counts =
      collections.length > 0
        ? await this.countCollections(wallets, collections, needAccounts ? classic : undefined)
        : new Map<string, Map<string, bigint>>();
    const out = new Map<string, Map<string, Holding>>();
    wallets.forEach((wallet, i) => {
      const accounts = accountsByWallet[i] as TokenAccount[];
      const lamports = walletAccounts.get(wallet);
      const byKey = new Map<string, Holding>();
      for (const t of targets) {
        let amount: bigint;
        let held: boolean;
        if (t.kind === 'token') {
          const mine = accounts.filter((a) => a.mint === t.mintAddress);
          amount = sum(mine);
          held = mine.length > 0;
        } else if (t.kind === 'sol') {
          const wrapped = accounts.filter((a) => a.mint === WRAPPED_SOL_MINT);
          amount = (lamports ?? 0n) + sum(wrapped);
          held = wrapped.length > 0;
        } else {
          amount = counts.get(wallet)?.get(t.mintAddress) ?? 0n;
          held = amount > 0n;
        }
        byKey.set(holdingKey(t), { walletFound: held || lamports !== undefined, amount });
      }
      out.set(wallet, byKey);
    });
    return out;
  }

  private async tokenAccounts(wallet: string, programs: string[]): Promise<TokenAccount[]> {
    const lists = await Promise.all(
      programs.map((programId) => this.rpc.getTokenAccountsByOwner(wallet, { programId })),
    );
    return lists.flat();
  }

  /** The lamports of each wallet the chain knows (absent: no account), per 100 wallets. */
  private async walletAccounts(wallets: string[]): Promise<Map<string, bigint>> {
    const found = new Map<string, bigint>();
    const chunks = chunk(wallets, MULTIPLE_ACCOUNTS_MAX);
    const answers = await Promise.all(chunks.map((c) => this.rpc.getMultipleAccounts(c)));
    chunks.forEach((c, i) => {
      c.forEach((w, j) => {
        const acc = answers[i]?.[j];
        if (acc) found.set(w, acc.lamports);
      });
    });
    return found;
  }

  /** Per wallet, how many NFTs of each collection (verified) it holds: by DAS when offered. */
  private async countCollections(
    wallets: string[],
    collections: string[],
    classicAccounts?: Map<string, TokenAccount[]>,
  ): Promise<Map<string, Map<string, bigint>>> {
    if (this.das !== false) {
      try {
        const counts = await this.countByDas(wallets, collections);
        this.das = true;
        return counts;
      } catch (err) {
        if (!(err instanceof SolanaRpcError) || !METHOD_NOT_FOUND.has(err.rpcCode ?? 0)) throw err;
        this.das = false;
      }
    }
    return this.countByMetadata(wallets, collections, classicAccounts);
  }

  private async countByDas(
    wallets: string[],
    collections: string[],
  ): Promise<Map<string, Map<string, bigint>>> {
    const wanted = new Set(collections);
    const out = new Map<string, Map<string, bigint>>();
    await Promise.all(
      wallets.map(async (wallet) => {
        const assets = await this.rpc.getAssetsByOwner(wallet);
        this.stats.dasReads++;
        const counts = new Map<string, bigint>();
        for (const a of assets) {
          // Classic SPL NFTs only (DESIGN §3): compressed and Core assets are out of scope.
          if (a.compressed || !a.collection || !wanted.has(a.collection) || !CLASSIC_NFT.has(a.interface))
            continue;
          counts.set(a.collection, (counts.get(a.collection) ?? 0n) + 1n);
        }
        out.set(wallet, counts);
      }),
    );
    return out;
  }

  /**
   * Standard JSON-RPC only: each wallet's classic token accounts holding 1 of a 0-decimal mint, then
   * their metadata accounts, 100 per getMultipleAccounts.
   */
  private async countByMetadata(
    wallets: string[],
    collections: string[],
    classicAccounts?: Map<string, TokenAccount[]>,
  ): Promise<Map<string, Map<string, bigint>>> {
    this.stats.metadataScans++;
    const wanted = new Set(collections);
    const nfts = await Promise.all(
      wallets.map(async (wallet) =>
        (
          classicAccounts?.get(wallet) ??
          (await this.rpc.getTokenAccountsByOwner(wallet, { programId: TOKEN_PROGRAM_ID }))
        )
          .filter((a) => a.amount === 1n && a.decimals === 0)
          .map((a) => ({ wallet, mint: a.mint })),
      ),
    );
    // One read per distinct (wallet, mint): token accounts of one mint, however many were sent to
    // the wallet, hold one NFT at most (a mint of supply 1) and cost one metadata read.
    const seen = new Set<string>();
    const all = nfts.flat().filter((n) => {
      const key = `${n.wallet}:${n.mint}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (all.length > defaults.gateNftScanMax)
      throw new SolanaRpcError(
        `${all.length} NFTs to read one by one (more than ${defaults.gateNftScanMax}); a collection gate over wallets this large needs an RPC node with the DAS API`,
      );
    const pdas = await Promise.all(all.map((n) => metadataAddress(n.mint)));
    const accounts = (
      await mapInBatches(chunk(pdas, MULTIPLE_ACCOUNTS_MAX), defaults.gateNftScanConcurrency, (c) =>
        this.rpc.getMultipleAccounts(c),
      )
    ).flat();
    const out = new Map<string, Map<string, bigint>>(wallets.map((w) => [w, new Map()]));
    all.forEach((nft, i) => {
      const acc = accounts[i];
      const meta = acc?.owner === TOKEN_METADATA_PROGRAM_ID ? decodeNftMetadata(acc.data) : null;
      if (!meta || meta.mint !== nft.mint || !meta.collection?.verified) return;
      if (!wanted.has(meta.collection.key)) return;
      const counts = out.get(nft.wallet) as Map<string, bigint>;
      counts.set(meta.collection.key, (counts.get(meta.collection.key) ?? 0n) + 1n);
    });
    return out;
  }
}

/** DAS interfaces of classic (SPL Token, Metaplex metadata) NFTs. */
const CLASSIC_NFT = new Set(['V1_NFT', 'ProgrammableNFT', 'LEGACY_NFT', 'V2_NFT']);

const sum = (accounts: TokenAccount[]) => accounts.reduce((s, a) => s + a.amount, 0n);

/** `fn` over `items`, at most `width` at a time, answers in the items' order. */
async function mapInBatches<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
