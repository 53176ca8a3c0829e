import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { fieldErrors } from '../../http/error-handler.js';
import { validationFailed } from '../../http/errors.js';
import { orgGuards } from '../../http/permissions.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { BoundedSet, GateChecker, serializeCheckResult } from './token-gates.check.js';
import {
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

const PREFIX = '/identity/organizations/:orgSlug/token-gates';

/** Token gates: management under the org (org.tokenGates.*), and the public, cached balance check. */
export const tokenGatesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const requirePermission = orgGuards(ctx);
  const byOrg = (req: FastifyRequest) => req.org?.id;
  const view = [
    authenticate(ctx),
    requirePermission('org.tokenGates.view'),
    ctx.rateLimits.guard('orgRead', byOrg),
  ];
  const edit = [
    authenticate(ctx),
    requirePermission('org.tokenGates.edit'),
    ctx.rateLimits.guard('tokenGateWrite', byOrg),
  ];

  app.post(
    PREFIX,
    {
      schema: {
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
    { schema: { params: GateParams, response: { 200: TokenGateSchema, ...authErrors } }, preHandler: view },
    async (req) => getGate(ctx, req.org, req.params.gateId),
  );

  app.patch(
    `${PREFIX}/:gateId`,
    {
      schema: { params: GateParams, body: UpdateGateBody, response: { 200: TokenGateSchema, ...authErrors } },
      preHandler: edit,
    },
    async (req) => patchGate(ctx, req.org, principalOf(req).userId, req.params.gateId, req.body),
  );

  app.delete(
    `${PREFIX}/:gateId`,
    {
      schema: { params: GateParams, response: { 204: Type.Null(), ...authErrors } },
      preHandler: edit,
    },
    async (req, reply) => {
      await removeGate(ctx, req.org, principalOf(req).userId, req.params.gateId);
      return reply.code(204).send(null);
    },
  );

  // The public check. Its query errors are all 422 `validation_failed` (the interface's status for a
  // bad walletAddress), so schema failures are attached and rendered here. One preHandler does the
  // rate limit and the validation: this is the hot path, and each hook costs a promise per request.
  const checker = new GateChecker(ctx, app.log);
  app.addHook('onClose', async () => checker.close());
  const knownAddresses = new BoundedSet(defaults.tokenGateLookupMaxEntries);
  async function checkPreHandler(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const query = req.query as { walletAddress?: string; refresh?: unknown };
    if (query.refresh === 'true') await ctx.rateLimits.consume('gateCheckRefresh', req.ip, reply);
    else await ctx.rateLimits.consume('gateCheck', req.ip, reply);
    if (req.validationError) {
      const issues = (req.validationError as { validation?: unknown }).validation;
      throw validationFailed(
        fieldErrors((issues ?? []) as Parameters<typeof fieldErrors>[0], 'querystring'),
        422,
      );
    }
    const wallet = query.walletAddress as string;
    if (knownAddresses.has(wallet)) return;
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
  }

  app.get(
    `${PREFIX}/:gateId/check`,
    {
      schema: {
        params: Type.Object({ orgSlug: Type.String(), gateId: Type.String() }),
        querystring: CheckQuery,
        response: { 200: CheckResultSchema, ...errorResponses(404, 422, 429, 502, 504) },
      },
      attachValidation: true,
      preHandler: checkPreHandler,
    },
    async (req, reply) => {
      const { orgSlug, gateId } = req.params;
      const { walletAddress, refresh } = req.query;
      const { result, ageSeconds } = await checker.check(orgSlug, gateId, walletAddress, refresh === 'true');
      if (ageSeconds !== undefined) reply.header('age', String(ageSeconds));
      // Pre-serialised (a JSON string with a JSON content type is sent as is); the schema above still
      // documents the body, and serializeCheckResult can only write its three fields.
      const body = serializeCheckResult(result) as unknown as typeof result;
      return reply.header('content-type', 'application/json; charset=utf-8').send(body);
    },
  );
};
