import { type Static, Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { Name, Nullable, OrgParams, PathId } from '../../http/schemas.js';

/** Path parameters are bounded so that nothing unreasonable reaches a query; unknown values are 404. */
const Description = Type.String({ maxLength: limits.descriptionMax });

/**
 * Raw token units as a decimal string: digits only (no sign, exponent, point or spaces), read as a
 * BigInt and stored without leading zeros. Bounded only so a request cannot make the server parse a
 * megabyte-long number; the bound is far above any balance.
 */
const MinHoldings = Type.String({
  pattern: '^[0-9]+$',
  minLength: 1,
  maxLength: limits.minHoldingsMaxDigits,
});
/** Shape only; the service also checks that it decodes to 32 bytes (isSolanaAddress). */
const Base58Address = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' });

/**
 * What a gate counts (DESIGN §3): `token` raw units of an SPL / Token-2022 mint; `collection` NFTs of
 * a verified Metaplex collection (`mintAddress` is the collection mint); `sol` lamports, native plus
 * wrapped (`mintAddress` must be the wrapped-SOL mint). Set at creation: PATCH refuses it.
 */
export const GateKind = Type.Union([Type.Literal('token'), Type.Literal('collection'), Type.Literal('sol')]);

export const GateListParams = OrgParams;
export const GateParams = Type.Object({ orgSlug: PathId, gateId: PathId });

export const TokenGateSchema = Type.Object({
  id: Type.String(),
  /** The org's slug. */
  org: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  kind: GateKind,
  mintAddress: Type.String(),
  minHoldings: Type.String(),
  enabled: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type TokenGateView = Static<typeof TokenGateSchema>;

export const CreateGateBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    kind: Type.Optional(GateKind),
    mintAddress: Base58Address,
    minHoldings: MinHoldings,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateGateInput = Static<typeof CreateGateBody>;

/** `mintAddress` and `kind` are immutable: sending one is a 400 `unknown_field` like any read-only field. */
export const UpdateGateBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    minHoldings: Type.Optional(MinHoldings),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateGateInput = Static<typeof UpdateGateBody>;

export const GateListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: limits.orgListLimitMax, default: limits.orgListLimitDefault }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const GateListSchema = Type.Object({ items: Type.Array(TokenGateSchema), total: Type.Integer() });

/**
 * The public check's query. Every problem with it answers 422 `validation_failed` (the interface's
 * status for a bad `walletAddress`); `refresh` accepts only the value `true`.
 */
export const CheckParams = Type.Object({ orgSlug: Type.String(), gateId: Type.String() });

/**
 * `attest=true` on any check (single, policy, bulk) adds a signed `attestation` (DESIGN §3): a compact
 * JWS (RS256, `typ: gate-attestation+jwt`, kid in the JWKS) over the answer given, valid 5 minutes.
 */
export const Attest = Type.Optional(
  Type.Literal('true', {
    description:
      'With `true`, the answer carries `attestation`: a JWS of the answer signed with the issuer’s key (verify it with the JWKS).',
  }),
);
/**
 * The attestation of an answer: a compact JWS (RS256, header `typ: gate-attestation+jwt`, `kid` in
 * the issuer's JWKS) with claims iss, sub (the wallet), gate or policy, org (slug), has_access, for a
 * gate balance and reason, iat and exp = iat + 300. Present only with `attest=true`.
 */
export const Attestation = Type.Optional(
  Type.String({
    description:
      'Only with `attest=true`: a compact JWS (RS256, `typ` gate-attestation+jwt, `kid` in the JWKS) with claims iss, sub (wallet), gate or policy, org, has_access, (for a gate) balance and reason, iat, exp = iat + 300.',
  }),
);

export const CheckQuery = Type.Object(
  {
    walletAddress: Type.String({ minLength: 1, maxLength: 100 }),
    refresh: Type.Optional(Type.Literal('true')),
    attest: Attest,
  },
  { additionalProperties: false },
);
export type CheckQueryInput = Static<typeof CheckQuery>;

export type GateCheckReason = 'insufficientBalance' | 'gateDisabled' | 'walletNotFound';

export const CheckResultSchema = Type.Object({
  hasAccess: Type.Boolean(),
  balance: Nullable(Type.String()),
  reason: Nullable(
    Type.Union([
      Type.Literal('insufficientBalance'),
      Type.Literal('gateDisabled'),
      Type.Literal('walletNotFound'),
    ]),
  ),
  attestation: Attestation,
});
export interface CheckResult {
  hasAccess: boolean;
  balance: string | null;
  reason: GateCheckReason | null;
}

/** The bulk check (DESIGN §3): 1–100 wallets × 1–20 gates of one org. */
export const BulkCheckBody = Type.Object(
  {
    walletAddresses: Type.Array(Base58Address, { minItems: 1, maxItems: 100 }),
    gateIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false },
);

export const BulkCheckQuery = Type.Object({ attest: Attest }, { additionalProperties: false });

export const BulkCheckResultSchema = Type.Object({
  /** Wallet-major, in input order, duplicates kept. */
  results: Type.Array(
    Type.Object({
      walletAddress: Type.String(),
      gateId: Type.String(),
      hasAccess: Type.Boolean(),
      balance: Nullable(Type.String()),
      reason: CheckResultSchema.properties.reason,
      /** With `attest=true`: this result's own attestation. */
      attestation: Attestation,
    }),
  ),
});
