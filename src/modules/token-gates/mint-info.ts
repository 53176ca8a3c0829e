import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { ApiError, validationFailed } from '../../http/errors.js';
import { orgScope } from '../orgs/org-scope.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors, errorResponses, OrgParams } from '../../http/schemas.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { type MintInfo, SolanaRpc, SolanaRpcTimeoutError, TOKEN_2022_PROGRAM_ID } from '../../solana/rpc.js';

const doc = routeDoc('Token gates');

export const MintInfoParams = OrgParams;
export const MintInfoQuery = Type.Object(
  { mintAddress: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const MintInfoSchema = Type.Object({
  mintAddress: Type.String(),
  /** False when the chain has no mint at this address (no account, or an account that is not a mint). */
  found: Type.Boolean(),
  /** Present when found: the token program that owns the mint. */
  program: Type.Optional(Type.Union([Type.Literal('spl-token'), Type.Literal('spl-token-2022')])),
  /** Present when found: `minHoldings` is in raw units, 10^decimals of them make one token. */
  decimals: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Present when the node reported it: the supply in raw units. */
  supply: Type.Optional(Type.String()),
});
type MintInfoView = Static<typeof MintInfoSchema>;

interface Entry {
  view: MintInfoView;
  expiresAt: number;
}

/**
 * The mints looked up, per context: a mint's decimals never change, so a found mint is kept for
 * `mintInfoTtl` seconds and an unknown address for `mintInfoMissTtl` (it may be created meanwhile).
 * Bounded: the oldest entry goes when it is full. Not security state: it only informs a form.
 */
export class MintInfoCache {
  private readonly entries = new Map<string, Entry>();
  readonly rpc: SolanaRpc;

  constructor(private readonly ctx: AppContext) {
    this.rpc = new SolanaRpc({ url: ctx.config.solanaRpcUrl, timeoutMs: defaults.solanaRpcTimeoutMs });
  }

  async lookup(mintAddress: string): Promise<MintInfoView> {
    const now = this.ctx.clock.nowMs();
    const hit = this.entries.get(mintAddress);
    if (hit && hit.expiresAt > now) return hit.view;
    let mint: MintInfo | null;
    try {
      mint = await this.rpc.getMint(mintAddress);
    } catch (err) {
      if (err instanceof SolanaRpcTimeoutError)
        throw new ApiError(504, 'gateway_timeout', 'the Solana RPC node did not answer in time');
      throw new ApiError(502, 'bad_gateway', 'the Solana RPC node failed to answer');
    }
    const view: MintInfoView = mint
      ? {
          mintAddress,
          found: true,
          program: mint.program === TOKEN_2022_PROGRAM_ID ? 'spl-token-2022' : 'spl-token',
          decimals: mint.decimals,
          ...(mint.supply !== undefined ? { supply: mint.supply } : {}),
        }
      : { mintAddress, found: false };
    const ttl = mint ? defaults.mintInfoTtl : defaults.mintInfoMissTtl;
    this.entries.delete(mintAddress);
    if (this.entries.size >= defaults.mintInfoMaxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(mintAddress, { view, expiresAt: now + ttl * 1000 });
    return view;
  }
}

/**
 * `GET …/token-gates/mint-info?mintAddress=`: what the chain says of a mint (its decimals above all),
 * so a form can show `minHoldings` in tokens. Members who can view gates may ask; the lookups are
 * cached and limited per org, so the RPC node is not an open proxy.
 */
export const mintInfoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const cache = new MintInfoCache(ctx);
  const guard = orgScope(ctx);
  app.get(
    '/identity/organizations/:orgSlug/token-gates/mint-info',
    {
      schema: {
        ...doc(
          'getTokenGateMintInfo',
          "A mint's token program and decimals, as the Solana RPC reports them",
          {
            description:
              'Answers `found: false` when the chain has no mint at the address. Cached (a found mint for an hour, ' +
              'an unknown address for a minute). 422 for an address that is not base58 of 32 bytes; 502 or 504 ' +
              'when the RPC node fails or does not answer.',
          },
        ),
        params: MintInfoParams,
        querystring: MintInfoQuery,
        response: { 200: MintInfoSchema, ...authErrors, ...errorResponses(422, 502, 504) },
      },
      preHandler: guard.chain('org.tokenGates.view', 'mintInfo'),
    },
    async (req) => {
      const { mintAddress } = req.query;
      if (!isSolanaAddress(mintAddress))
        throw validationFailed(
          [
            {
              field: 'mintAddress',
              code: 'invalid_format',
              message: 'must be a base58 Solana address (32 bytes)',
            },
          ],
          422,
        );
      return cache.lookup(mintAddress);
    },
  );
};
