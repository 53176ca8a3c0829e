import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { fieldErrors } from '../../http/error-handler.js';
import { validationFailed } from '../../http/errors.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { isSolanaAddress } from '../../lib/solana.js';
import { orgScope } from '../orgs/org-scope.js';
import { attestPolicy } from './attestation.js';
import { checkPolicy } from './gate-policies.check.js';
import {
  CreatePolicyBody,
  GatePolicyListSchema,
  GatePolicySchema,
  PolicyCheckQuery,
  PolicyCheckResultSchema,
  PolicyListParams,
  PolicyListQuery,
  PolicyParams,
  UpdatePolicyBody,
} from './gate-policies.schemas.js';
import {
  createPolicy,
  getPolicy,
  listOrgPolicies,
  patchPolicy,
  removePolicy,
} from './gate-policies.service.js';
import { gateCheckerOf } from './token-gates.check.js';

const PREFIX = '/identity/organizations/:orgSlug/gate-policies';
const doc = routeDoc('Token gates');

/**
 * The query of a public check, or the 422 `validation_failed` the gate check answers for it (its
 * schema errors are attached, not thrown, so that every problem with the query is a 422).
 */
export function checkedWallet(req: FastifyRequest): string {
  if (req.validationError) {
    const issues = (req.validationError as { validation?: unknown }).validation;
    throw validationFailed(
      fieldErrors((issues ?? []) as Parameters<typeof fieldErrors>[0], 'querystring'),
      422,
    );
  }
  const wallet = (req.query as { walletAddress: string }).walletAddress;
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
  return wallet;
}

/** Gate policies (DESIGN §3): CRUD under the org (org.tokenGates.*) and the public policy check. */
export const gatePoliciesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  const guard = orgScope(ctx);
  const view = guard.read('org.tokenGates.view');
  const edit = guard.chain('org.tokenGates.edit', 'tokenGateWrite');

  app.post(
    PREFIX,
    {
      schema: {
        ...doc('createGatePolicy', 'Create a gate policy', {
          description:
            '`rule` is `{ gate }`, `{ all: [rule] }`, `{ any: [rule] }`, `{ atLeast: n, of: [rule] }` or `{ not: rule }`: ' +
            'at most 5 levels, 50 distinct gates of this organization, non-empty lists, 1 ≤ n ≤ list length.',
        }),
        params: PolicyListParams,
        body: CreatePolicyBody,
        response: { 201: GatePolicySchema, ...authErrors },
      },
      preHandler: edit,
    },
    async (req, reply) =>
      reply.code(201).send(await createPolicy(ctx, req.org, principalOf(req).userId, req.body)),
  );

  app.get(
    PREFIX,
    {
      schema: {
        ...doc('listGatePolicies', "List an organization's gate policies"),
        params: PolicyListParams,
        querystring: PolicyListQuery,
        response: { 200: GatePolicyListSchema, ...authErrors },
      },
      preHandler: view,
    },
    async (req) => listOrgPolicies(ctx, req.org, req.query),
  );

  app.get(
    `${PREFIX}/:policyId`,
    {
      schema: {
        ...doc('getGatePolicy', 'Get a gate policy'),
        params: PolicyParams,
        response: { 200: GatePolicySchema, ...authErrors },
      },
      preHandler: view,
    },
    async (req) => getPolicy(ctx, req.org, req.params.policyId),
  );

  app.patch(
    `${PREFIX}/:policyId`,
    {
      schema: {
        ...doc('updateGatePolicy', 'Update a gate policy'),
        params: PolicyParams,
        body: UpdatePolicyBody,
        response: { 200: GatePolicySchema, ...authErrors },
      },
      preHandler: edit,
    },
    async (req) => patchPolicy(ctx, req.org, principalOf(req).userId, req.params.policyId, req.body),
  );

  app.delete(
    `${PREFIX}/:policyId`,
    {
      schema: {
        ...doc('deleteGatePolicy', 'Delete a gate policy', {
          description: 'A policy that a brand scope or an app names cannot be deleted: 409 `conflict`.',
        }),
        params: PolicyParams,
        response: { 204: Type.Null(), ...authErrors, ...errorResponses(409) },
      },
      preHandler: edit,
    },
    async (req, reply) => {
      await removePolicy(ctx, req.org, principalOf(req).userId, req.params.policyId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    `${PREFIX}/:policyId/check`,
    {
      schema: {
        ...doc('checkGatePolicy', 'Check whether a wallet passes a gate policy (public)', {
          description:
            'Evaluates every distinct gate of the rule (the gate check: same cache, limits and errors) and the rule over them. ' +
            'Each distinct gate spends one point of the gate check limit (of the refresh limit with refresh=true).',
          rateLimits: ['gateCheck', 'gateCheckRefresh'],
        }),
        params: PolicyParams,
        querystring: PolicyCheckQuery,
        response: { 200: PolicyCheckResultSchema, ...errorResponses(404, 422, 429, 502, 504) },
      },
      attachValidation: true,
    },
    async (req, reply) => {
      reply.header('access-control-allow-origin', '*');
      const refresh = req.query.refresh === 'true';
      // A check of each distinct gate of the rule, each costing what a gate check costs: one
      // point for the policy's lookup, the rest once its gates are known (a rule of 50 gates must
      // not be 50 balance reads for one point).
      const limit = refresh ? 'gateCheckRefresh' : 'gateCheck';
      const source = ctx.rateLimits.source(req);
      await ctx.rateLimits.consume(limit, source, reply);
      const wallet = checkedWallet(req);
      const checker = gateCheckerOf(ctx);
      if (!checker) throw new Error('the token gate routes are not registered');
      const { orgSlug, policyId } = req.params;
      const result = await checkPolicy(ctx, checker, orgSlug, policyId, wallet, refresh, (gates) =>
        gates > 1 ? ctx.rateLimits.consume(limit, source, reply, undefined, gates - 1) : undefined,
      );
      if (req.query.attest !== 'true') return result;
      return { ...result, attestation: await attestPolicy(ctx, orgSlug, policyId, wallet, result.hasAccess) };
    },
  );
};
