import {
  type Address,
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
} from '@solana/addresses';
import {
  addDecoderSizePrefix,
  getArrayDecoder,
  getBooleanDecoder,
  getOptionDecoder,
  getStructDecoder,
  getU8Decoder,
  getU16Decoder,
  getU32Decoder,
  getUtf8Decoder,
  type Option,
  unwrapOption,
} from '@solana/codecs';

/** The Metaplex Token Metadata program. */
export const TOKEN_METADATA_PROGRAM_ID = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s';
/** The wrapped-SOL mint (native SOL as an SPL token). */
export const WRAPPED_SOL_MINT = 'So11111111111111111111111111111111111111112';
/** Account discriminator of a Metaplex MetadataV1 account (the `Key` enum). */
const METADATA_V1_KEY = 4;

const borshString = () => addDecoderSizePrefix(getUtf8Decoder(), getU32Decoder());

/**
 * The Metaplex Token Metadata account up to `token_standard` (mpl-token-metadata's `Metadata`,
 * Borsh): every field before `collection`. Older accounts end early, so the collection is read after
 * it only when bytes remain.
 */
const metadataHeadDecoder = getStructDecoder([
  ['key', getU8Decoder()],
  ['updateAuthority', getAddressDecoder()],
  ['mint', getAddressDecoder()],
  ['name', borshString()],
  ['symbol', borshString()],
  ['uri', borshString()],
  ['sellerFeeBasisPoints', getU16Decoder()],
  [
    'creators',
    getOptionDecoder(
      getArrayDecoder(
        getStructDecoder([
          ['address', getAddressDecoder()],
          ['verified', getBooleanDecoder()],
          ['share', getU8Decoder()],
        ]),
      ),
    ),
  ],
  ['primarySaleHappened', getBooleanDecoder()],
  ['isMutable', getBooleanDecoder()],
  ['editionNonce', getOptionDecoder(getU8Decoder())],
  ['tokenStandard', getOptionDecoder(getU8Decoder())],
]);

const collectionDecoder = getOptionDecoder(
  getStructDecoder([
    ['verified', getBooleanDecoder()],
    ['key', getAddressDecoder()],
  ]),
);

export interface NftMetadata {
  mint: string;
  /** The collection the metadata names, and whether its authority verified it. */
  collection: { key: string; verified: boolean } | null;
}

/**
 * Decodes a Metaplex metadata account's bytes; null when they are not a MetadataV1 account (wrong
 * discriminator, or too short to hold one).
 */
export function decodeNftMetadata(data: Uint8Array): NftMetadata | null {
  if (data.length < 1 || data[0] !== METADATA_V1_KEY) return null;
  let head: ReturnType<typeof metadataHeadDecoder.read>;
  try {
    head = metadataHeadDecoder.read(data, 0);
  } catch {
    return null;
  }
  const [fields, offset] = head;
  let collection: NftMetadata['collection'] = null;
  if (offset < data.length) {
    try {
      const c = unwrapOption(
        collectionDecoder.read(data, offset)[0] as Option<{ verified: boolean; key: Address }>,
      );
      if (c) collection = { key: c.key, verified: c.verified };
    } catch {
      collection = null;
    }
  }
  return { mint: fields.mint, collection };
}

const addressEncoder = getAddressEncoder();
const METADATA_SEED = new TextEncoder().encode('metadata');

/** The metadata account of `mint`: PDA of ["metadata", program id, mint] under the metadata program. */
export async function metadataAddress(mint: string): Promise<string> {
  const program = TOKEN_METADATA_PROGRAM_ID as Address;
  const [pda] = await getProgramDerivedAddress({
    programAddress: program,
    seeds: [METADATA_SEED, addressEncoder.encode(program), addressEncoder.encode(mint as Address)],
  });
  return pda;
}
