import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { principalOf } from '../../http/auth.js';
import { anyOriginMayRead, grantPreflight } from '../../http/cors.js';
import { makeAjv } from '../../http/ajv.js';
import { fieldErrors } from '../../http/error-handler.js';
import { validationFailed } from '../../http/errors.js';
import { orgScope } from '../orgs/org-scope.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { attestGate } from './attestation.js';
import { BoundedSet, type CheckAnswer, GateChecker, serializeCheckResult } from './token-gates.check.js';
import type { CheckResult } from './token-gates.schemas.js';
import {
  BulkCheckBody,
  BulkCheckQuery,
  BulkCheckResultSchema,
  CheckParams,
  CheckQuery,
  CheckResultSchema,
  CreateGateBody,
  GateListParams,
  GateListQuery,
  GateListSchema,
  GateParams,
  TokenGateSchema,
  UpdateGateBody,
} from './token-gates.schemas.js';
import { createGate, getGate, listOrgGates, patchGate, removeGate } from './token-gates.service.js';
import { routeDoc } from '../../http/route-doc.js';

const PREFIX = '/identity/organizations/:orgSlug/token-gates';

const doc = routeDoc('Token gates');

/** Token gates: management under the org (org.tokenGates.*), and the public, cached balance check. */
export const tokenGatesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx);
  const view = guard.read('org.tokenGates.view');
  const edit = guard.chain('org.tokenGates.edit', 'tokenGateWrite');

  app.post(
    PREFIX,
    {
      schema: {
        ...doc('createTokenGate', 'Create a token gate'),
        params: GateListParams,
        body: CreateGateBody,
        response: { 201: TokenGateSchema, ...authErrors },
      },
      preHandler: edit,
    },
    async (req, reply) => {
      const gate = await createGate(ctx, req.org, principalOf(req).userId, req.body);
      return reply.code(201).send(gate);
    },
  );

  app.get(
    PREFIX,
    {
      schema: {
        ...doc('listTokenGates', "List an organization's token gates"),
        params: GateListParams,
        querystring: GateListQuery,
        response: { 200: GateListSchema, ...authErrors },
      },
      preHandler: view,
    },
    async (req) => listOrgGates(ctx, req.org, req.query),
  );

  app.get(
    `${PREFIX}/:gateId`,
    {
      schema: {
        ...doc('getTokenGate', 'Get a token gate'),
        params: GateParams,
        response: { 200: TokenGateSchema, ...authErrors },
      },
      preHandler: view,
    },
    async (req) => getGate(ctx, req.org, req.params.gateId),
  );

  app.patch(
    `${PREFIX}/:gateId`,
    {
      schema: {
        ...doc('updateTokenGate', 'Update a token gate'),
        params: GateParams,
        body: UpdateGateBody,
        response: { 200: TokenGateSchema, ...authErrors },
      },
      preHandler: edit,
    },
    async (req) => patchGate(ctx, req.org, principalOf(req).userId, req.params.gateId, req.body),
  );

  app.delete(
    `${PREFIX}/:gateId`,
    {
      schema: {
        ...doc('deleteTokenGate', 'Delete a token gate', {
          description: 'A gate that a gate policy names cannot be deleted: 409 `conflict`.',
        }),
        params: GateParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(409) },
      },
      preHandler: edit,
    },
    async (req, reply) => {
      await removeGate(ctx, req.org, principalOf(req).userId, req.params.gateId);
      return reply.code(204).send(null);
    },
  );

  // The public check. Its query errors are all 422 `validation_failed` (the interface's status for a
  // bad walletAddress), so schema failures are attached and rendered here. This is the hot path: one
  // handler, not hooks, and a cached answer is sent synchronously, without a promise (the in-memory
  // rate limit, the gate lookup and the memory balance cache all answer at once).
  const checker = new GateChecker(ctx, app.log);
  app.addHook('onClose', async () => checker.close());
  const knownAddresses = new BoundedSet(defaults.tokenGateLookupMaxEntries);

  function validWallet(req: FastifyRequest): string {
    if (req.validationError) {
      const issues = (req.validationError as { validation?: unknown }).validation;
      throw validationFailed(
        fieldErrors((issues ?? []) as Parameters<typeof fieldErrors>[0], 'querystring'),
        422,
      );
    }
    const wallet = (req.query as { walletAddress: string }).walletAddress;
    if (knownAddresses.has(wallet)) return wallet;
    if (!isSolanaAddress(wallet))
      throw validationFailed(
        [
          {
            field: 'walletAddress',
            code: 'invalid_format',
            message: 'must be a base58 Solana address (32 bytes)',
          },
        ],
        422,
      );
    knownAddresses.add(wallet);
    return wallet;
  }

  /** The answer, at once when this process has it cached, else the lookup's promise. */
  function lookup(
    req: FastifyRequest,
    orgSlug: string,
    gateId: string,
    refresh: boolean,
  ): CheckAnswer | Promise<CheckAnswer> {
    const wallet = validWallet(req);
    return (
      (refresh ? undefined : checker.cached(orgSlug, gateId, wallet)) ??
      checker.check(orgSlug, gateId, wallet, refresh)
    );
  }

  app.post(
    `${PREFIX}/check`,
    {
      schema: {
        ...doc('checkTokenGatesBulk', 'Check many wallets against many token gates (public)', {
          description:
            'Results are wallet-major in input order. Each request spends wallets × gates of the per-IP budget ' +
            '(6,000 a minute); balances share the single check’s cache, and what is missing is read in batches.',
          rateLimits: ['gateBulkCheck', 'gateAttest'],
        }),
        params: GateListParams,
        querystring: BulkCheckQuery,
        body: BulkCheckBody,
        response: { 200: BulkCheckResultSchema, ...errorResponses(400, 404, 429, 502, 504) },
      },
      // Public and credential-free, and a JSON POST: preflighted (granted below), every answer readable.
      onSend: anyOriginMayRead,
    },
    async (req, reply) => {
      const { walletAddresses, gateIds } = req.body;
      const bad = walletAddresses.findIndex((w) => !isSolanaAddress(w));
      if (bad >= 0)
        throw validationFailed([
          {
            field: `walletAddresses.${bad}`,
            code: 'invalid_format',
            message: 'must be a base58 Solana address (32 bytes)',
          },
        ]);
      const source = ctx.rateLimits.source(req);
      const cost = walletAddresses.length * gateIds.length;
      await ctx.rateLimits.consume('gateBulkCheck', source, reply, undefined, cost);
      if (req.query.attest === 'true') {
        const pairs = new Set(walletAddresses.flatMap((w) => gateIds.map((g) => `${w}:${g}`))).size;
        await ctx.rateLimits.consume('gateAttest', source, reply, undefined, pairs);
      }
      const results = await checker.checkMany(req.params.orgSlug, gateIds, walletAddresses);
      const rows = results.map((r, i) => ({
        walletAddress: walletAddresses[Math.floor(i / gateIds.length)] as string,
        gateId: gateIds[i % gateIds.length] as string,
        ...r,
      }));
      if (req.query.attest !== 'true') return { results: rows };
      return { results: await attestRows(req.params.orgSlug, rows) };
    },
  );

  /**
   * One attestation per result. A repeated (wallet, gate) pair has the same claims and RS256 is
   * deterministic, so each distinct pair is signed once; the signatures run on the libuv pool.
   */
  async function attestRows<R extends CheckResult & { walletAddress: string; gateId: string }>(
    orgSlug: string,
    rows: R[],
  ): Promise<Array<R & { attestation: string }>> {
    const signed = new Map<string, Promise<string>>();
    const tokens = await Promise.all(
      rows.map((r) => {
        const key = `${r.walletAddress}:${r.gateId}`;
        let p = signed.get(key);
        if (!p) {
          p = attestGate(ctx, orgSlug, r.gateId, r.walletAddress, r);
          signed.set(key, p);
        }
        return p;
      }),
    );
    return rows.map((r, i) => ({ ...r, attestation: tokens[i] as string }));
  }

  app.get(
    `${PREFIX}/:gateId/check`,
    {
      schema: {
        ...doc('checkTokenGate', 'Check whether a wallet passes a token gate (public)', {
          rateLimits: ['gateCheck', 'gateCheckRefresh'],
        }),
        params: CheckParams,
        querystring: CheckQuery,
        response: { 200: CheckResultSchema, ...errorResponses(404, 422, 429, 502, 504) },
      },
      attachValidation: true,
      validatorCompiler: checkValidatorCompiler,
    },
    function gateCheck(req, reply) {
      // Public and credential-free, so any web page may call it (a simple GET: no preflight). Set
      // before anything can fail, so a page can read the 404, 422 and 429 answers too.
      reply.header('access-control-allow-origin', '*');
      if (req.headers.origin !== undefined)
        reply.header('access-control-expose-headers', CHECK_EXPOSED_HEADERS);
      const { orgSlug, gateId } = req.params;
      const refresh = req.query.refresh === 'true';
      const attest = req.query.attest === 'true';
      // No reply: RateLimit-* go out only with a 429 here (the interface asks them of every answer on
      // the user routes only). Three more headers on every answer are a measurable part of this
      // route's cost; clients of the public check learn their budget from a refusal's headers.
      const limit = ctx.rateLimits.consume(
        refresh ? 'gateCheckRefresh' : 'gateCheck',
        ctx.rateLimits.source(req),
      );
      const answer = limit
        ? limit.then(() => lookup(req, orgSlug, gateId, refresh))
        : lookup(req, orgSlug, gateId, refresh);
      if (!attest && !(answer instanceof Promise)) {
        sendAnswer(reply, answer);
        return;
      }
      // Settles once the reply has gone out (as `return reply` in an async handler would). An
      // attestation signs the answer given, cached or fresh (the wallet was validated by lookup).
      return Promise.resolve(answer).then(async (a) => {
        const attestation = attest
          ? await attestGate(ctx, orgSlug, gateId, req.query.walletAddress, a.result)
          : undefined;
        sendAnswer(reply, a, attestation);
        await reply;
      });
    },
  );

  grantPreflight(app, `${PREFIX}/check`, ['POST'], ['content-type']);
};

/** Headers of the check a browser page may read: the cache age, and a refusal's budget. */
const CHECK_EXPOSED_HEADERS = 'Age, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';

/**
 * The body is pre-serialised (a JSON string with a JSON content type is sent as is); the route's
 * schema still documents it, and serializeCheckResult can only write its three fields.
 */
function sendAnswer(reply: FastifyReply, { result, ageSeconds }: CheckAnswer, attestation?: string): void {
  if (ageSeconds !== undefined) reply.header('age', String(ageSeconds));
  const body = serializeCheckResult(result);
  // A compact JWS is base64url and dots: nothing to escape.
  reply
    .header('content-type', 'application/json; charset=utf-8')
    .send(attestation === undefined ? body : `${body.slice(0, -1)},"attestation":"${attestation}"}`);
}

const queryAjv = makeAjv(true);

/**
 * The check's validators. The common params (two NUL-free strings within the router's length
 * bound) and the common query, `walletAddress` of 1–100 characters without a NUL and at most
 * `refresh=true`, are recognised in a few comparisons; anything else goes to the schema's own
 * compiled validator (hardened by the input rule like every route's), which decides and writes the
 * field errors. Generic validation was a few percent of a cached check.
 */
function checkValidatorCompiler({ schema, httpPart }: { schema: unknown; httpPart?: string }) {
  const full = queryAjv.compile(schema as object);
  const plain = httpPart === 'params' ? isPlainCheckParams : isPlainCheckQuery;
  const validate = (input: Record<string, unknown>): boolean => {
    if (plain(input)) return true;
    const ok = full(input) as boolean;
    validate.errors = full.errors;
    return ok;
  };
  validate.errors = null as typeof full.errors;
  return validate;
}

const plainParam = (v: unknown) => typeof v === 'string' && v.length <= 200 && !v.includes('\0');

function isPlainCheckParams(params: Record<string, unknown>): boolean {
  return plainParam(params.orgSlug) && plainParam(params.gateId);
}

function isPlainCheckQuery(query: Record<string, unknown>): boolean {
  const wallet = query.walletAddress;
  // UTF-16 length: ≤ 100 units is ≤ 100 characters, so nothing accepted here is refused by the schema.
  if (typeof wallet !== 'string' || wallet.length < 1 || wallet.length > 100 || wallet.includes('\0'))
    return false;
  let keys = 0;
  for (const _ in query) keys++;
  return keys === 1 || (keys === 2 && query.refresh === 'true');
}
