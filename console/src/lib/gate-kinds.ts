import { toTokens } from './tokens.js';

/** DESIGN §3: what a gate counts. `kind` is chosen at creation; PATCH cannot change it. */
export type GateKind = 'token' | 'collection' | 'sol';

/** A `sol` gate's mint: native SOL and wrapped SOL are counted together, in lamports. */
export const SOL_MINT = 'So11111111111111111111111111111111111111112';
export const SOL_DECIMALS = 9;

export const KINDS: { kind: GateKind; label: string; hint: string }[] = [
  {
    kind: 'token',
    label: 'Token',
    hint: 'Holders of an SPL Token or Token-2022 mint, in raw units, all accounts summed.',
  },
  {
    kind: 'collection',
    label: 'NFT collection',
    hint: 'Holders of NFTs whose Metaplex metadata names this collection, verified.',
  },
  {
    kind: 'sol',
    label: 'SOL',
    hint: 'Holders of SOL, in lamports: native plus wrapped SOL (not the accounts’ rent).',
  },
];

export const kindLabel = (kind: string | undefined): string =>
  KINDS.find((k) => k.kind === (kind ?? 'token'))?.label ?? String(kind);

/** A gate's balance or minimum in its own unit: tokens, NFTs or SOL. */
export function amountInUnit(kind: string | undefined, raw: string, decimals?: number): string {
  if (kind === 'collection') return `${raw} NFT${raw === '1' ? '' : 's'}`;
  if (kind === 'sol') return `${raw} lamports (${toTokens(raw, SOL_DECIMALS)} SOL)`;
  return decimals === undefined ? `${raw} raw units` : `${raw} raw units (${toTokens(raw, decimals)} tokens)`;
}

const REASONS: Record<string, string> = {
  insufficientBalance: 'The wallet holds less than the minimum.',
  gateDisabled: 'The gate is disabled.',
  walletNotFound: 'The chain does not know this wallet.',
};

/** A check's `reason` with its meaning: "insufficientBalance: The wallet holds less than the minimum." */
export const reasonText = (reason: string | null | undefined): string =>
  reason ? `${reason}: ${REASONS[reason] ?? ''}` : 'none';
