import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authenticate, principalOf } from '../../http/auth.js';
import { fieldErrors } from '../../http/error-handler.js';
import { unauthorized, forbidden, validationFailed } from '../../http/errors.js';
import { authErrors, errorResponses } from '../../http/schemas.js';
import { deleteAccount } from './account.service.js';
import { sessionsRoutes } from './sessions.routes.js';
import { listConsentGrants, revokeGrant, verifyAppToken } from './consent.service.js';
import {
  authTimeOf,
  requestMeta,
  requireAccessToken,
  requireKeyScope,
  requireSystemPermission,
} from '../../http/guards.js';
import {
  ActivityList,
  AppIdParams,
  AuthenticationProviders,
  ConsentGrants,
  FindByIdentifierBody,
  FindByWalletsBody,
  FindByWalletsResult,
  IdParams,
  LinkWalletBody,
  MaybeUser,
  OAuthTokenRecords,
  PublicKeys,
  RemoveWalletBody,
  UpdateUserBody,
  UpdateWalletBody,
  UserAppParams,
  UserIdParams,
  UsernameAvailability,
  UsernameAvailabilityBody,
  UserPublicKeySchema,
  UserSchema,
  WalletChallenge,
  WalletChallengeBody,
} from './users.schemas.js';
import {
  activityOf,
  authenticationProviders,
  currentUser,
  findByIdentifier,
  findByWallets,
  oauthTokenRecords,
  unlinkOAuthAccount,
  updateProfile,
  usernameAvailable,
} from './users.service.js';
import {
  linkWallet,
  listPublicKeys,
  unlinkWallet,
  updateWallet,
  walletLinkChallenge,
} from './wallets.service.js';
import { routeDoc } from '../../http/route-doc.js';
import cookie from '@fastify/cookie';
import { CONSOLE_BRAND_ID } from '../../config/system.js';
import { startProviderLink } from '../../oidc/signin/provider-link.js';
import { PROVIDER_TYPES } from '../../providers/types.js';

const NoContent = Type.Null();
const userOf = (req: FastifyRequest) => req.principal?.userId;

const doc = routeDoc('Users');

/**
 * End users: profile, activity, linked providers, wallets, API keys, consent grants, account
 * deletion and the admin lookups (the deletion sweeper is in src/jobs).
 * Every `/users/*` route of a user answers with the RateLimit-* headers of its limit.
 */
export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;

  const auth = authenticate(ctx);
  const read = [auth, requireKeyScope('users:read'), ctx.rateLimits.guard('usersMeRead', userOf)];
  const write = [auth, requireKeyScope('users:write'), ctx.rateLimits.guard('usersMeWrite', userOf)];

  await app.register(sessionsRoutes);

  // Profile --------------------------------------------------------------------------------------
  for (const path of ['/users/current', '/users/me']) {
    app.get(
      path,
      {
        schema: {
          // `/users/current` is the interface's alias of `/users/me`: described once (DESIGN.md §3).
          ...(path === '/users/me' ? doc('getMe', "Get the caller's profile") : { hide: true }),
          response: { 200: UserSchema, ...authErrors },
        },
        preHandler: read,
      },
      async (req) => currentUser(ctx, principalOf(req).userId),
    );
  }

  app.patch(
    '/users/:id',
    {
      schema: {
        ...doc('updateUser', "Update the caller's profile (`:id` is `me` or the caller's id)", {
          description:
            'Field validation answers 422 `validation_failed` (the interface asks 422 on this route).',
        }),
        params: UserIdParams,
        body: UpdateUserBody,
        response: { 200: UserSchema, ...authErrors, ...errorResponses(409, 422) },
      },
      // The interface answers field validation on this route with 422: the handler maps it.
      attachValidation: true,
      preHandler: write,
    },
    async (req) => {
      const callerId = principalOf(req).userId;
      const targetId = req.params.id === 'me' ? callerId : req.params.id;
      if (targetId !== callerId) throw forbidden([], 'a user can only update their own profile');
      if (req.validationError) {
        const v = req.validationError as { validation?: unknown[]; validationContext?: string };
        throw validationFailed(
          fieldErrors((v.validation ?? []) as Parameters<typeof fieldErrors>[0], v.validationContext),
          422,
          'profile validation failed',
        );
      }
      return updateProfile(ctx, callerId, targetId, req.body);
    },
  );

  app.post(
    '/users/username-availability',
    {
      schema: {
        ...doc('checkUsernameAvailability', 'Whether a username is free'),
        body: UsernameAvailabilityBody,
        response: { 200: UsernameAvailability, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => ({ available: await usernameAvailable(ctx, req.body.username) }),
  );

  // Activity and linked providers ----------------------------------------------------------------
  app.get(
    '/users/me/activity',
    {
      schema: {
        ...doc('listMyActivity', "The caller's recent sign-in activity"),
        response: { 200: ActivityList, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => ({ items: await activityOf(ctx, principalOf(req).userId) }),
  );

  app.get(
    '/users/me/authentication-providers',
    {
      schema: {
        ...doc('listMyAuthenticationProviders', "The caller's linked sign-in providers"),
        response: { 200: AuthenticationProviders, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => authenticationProviders(ctx, principalOf(req).userId),
  );

  app.get(
    '/users/me/oauth-tokens',
    {
      schema: {
        ...doc('listMyOAuthTokens', "The caller's live refresh tokens (sessions of apps)"),
        response: { 200: OAuthTokenRecords, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => oauthTokenRecords(ctx, principalOf(req).userId),
  );

  app.delete(
    '/users/me/oauth-tokens/:id',
    {
      schema: {
        ...doc('revokeMyOAuthToken', "Revoke one of the caller's refresh tokens"),
        params: IdParams,
        response: { 204: NoContent, ...authErrors, ...errorResponses(422) },
      },
      preHandler: write,
    },
    async (req, reply) => {
      await unlinkOAuthAccount(ctx, principalOf(req).userId, req.params.id, requestMeta(req));
      return reply.code(204).send(null);
    },
  );

  // The one users route that sets a cookie (the link's browser binding): cookies in its scope only.
  await app.register(async (scope) => {
    await scope.register(cookie);
    const linking = scope.withTypeProvider<TypeBoxTypeProvider>();
    linking.post(
      '/users/me/authentication-providers/:type/link',
      {
        schema: {
          ...doc('linkAuthenticationProvider', 'Start linking a sign-in provider to the caller', {
            description:
              'Answers the provider URL to send the browser to; the link completes on the provider callback.',
          }),
          params: Type.Object({ type: Type.Enum([...PROVIDER_TYPES]) }),
          response: {
            200: Type.Object({ authorizationUrl: Type.String() }),
            ...authErrors,
            ...errorResponses(400, 401, 403, 404, 429),
          },
        },
        config: { apiKeyScope: 'access-token-only' },
        preHandler: [
          auth,
          async (req) => {
            // Linking adds a way into the account: a signed-in user's token, never an API key.
            if (principalOf(req).kind !== 'access_token') {
              throw forbidden('access_token', 'linking a provider needs an access token from a sign-in');
            }
          },
          ctx.rateLimits.guard('usersMeWrite', userOf),
        ],
      },
      async (req, reply) =>
        startProviderLink(ctx, reply, {
          userId: principalOf(req).userId,
          type: req.params.type,
          brandId: CONSOLE_BRAND_ID,
        }),
    );
  });

  // Wallets --------------------------------------------------------------------------------------
  app.get(
    '/users/me/public-keys',
    {
      schema: {
        ...doc('listMyPublicKeys', "The caller's linked wallets"),
        response: { 200: PublicKeys, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => listPublicKeys(ctx, principalOf(req).userId),
  );

  app.post(
    '/users/me/wallet-challenge',
    {
      schema: {
        ...doc('createWalletChallenge', 'A message to sign to link a wallet'),
        body: WalletChallengeBody,
        response: { 200: WalletChallenge, ...authErrors },
      },
      preHandler: write,
    },
    async (req, reply) => {
      const challenge = await walletLinkChallenge(ctx, principalOf(req).userId, req.body.address);
      return reply.header('cache-control', 'no-store').send(challenge);
    },
  );

  app.post(
    '/users/me/public-keys',
    {
      schema: {
        ...doc('linkWallet', 'Link a wallet by its signed challenge'),
        body: LinkWalletBody,
        response: { 201: UserPublicKeySchema, ...authErrors, ...errorResponses(409) },
      },
      // A linked wallet signs in to the whole account: an API key must not be able to add one.
      preHandler: [auth, requireAccessToken, ctx.rateLimits.guard('publicKeyCreate', userOf)],
    },
    async (req, reply) => {
      const key = await linkWallet(
        ctx,
        principalOf(req).userId,
        { ...req.body, authTime: authTimeOf(req) },
        requestMeta(req),
      );
      return reply.code(201).send(key);
    },
  );

  app.patch(
    '/users/me/public-keys/:id',
    {
      schema: {
        ...doc('updateWallet', 'Update a linked wallet'),
        params: IdParams,
        body: UpdateWalletBody,
        response: { 200: UserPublicKeySchema, ...authErrors },
      },
      preHandler: write,
    },
    async (req) => updateWallet(ctx, principalOf(req).userId, req.params.id, req.body),
  );

  app.delete(
    '/users/me/public-keys/:id',
    {
      schema: {
        ...doc('unlinkWallet', 'Unlink a wallet'),
        params: IdParams,
        body: RemoveWalletBody,
        response: { 204: NoContent, ...authErrors, ...errorResponses(422) },
      },
      preHandler: write,
    },
    async (req, reply) => {
      await unlinkWallet(ctx, principalOf(req).userId, req.params.id, req.body, requestMeta(req));
      return reply.code(204).send(null);
    },
  );

  // Consent grants -------------------------------------------------------------------------------
  app.get(
    '/users/me/consent-grants',
    {
      schema: {
        ...doc('listMyConsentGrants', 'The apps the caller has consented to'),
        response: { 200: ConsentGrants, ...authErrors },
      },
      preHandler: read,
    },
    async (req) => ({ items: await listConsentGrants(ctx, principalOf(req).userId) }),
  );

  app.delete(
    '/users/me/consent-grants/:appId',
    {
      schema: {
        ...doc('revokeMyConsentGrant', "Withdraw the caller's consent to an app"),
        params: AppIdParams,
        response: { 204: NoContent, ...authErrors },
      },
      preHandler: write,
    },
    async (req, reply) => {
      const userId = principalOf(req).userId;
      await revokeGrant(ctx, userId, req.params.appId, userId);
      return reply.code(204).send(null);
    },
  );

  // An app revokes a user's grant to itself with its own client-credentials token.
  app.delete(
    '/users/:userId/consent-grants/:appId',
    {
      schema: {
        ...doc('revokeConsentGrantAsApp', "An app withdraws a user's grant to itself", {
          auth: 'accessToken',
          description:
            'Called by the app itself with a client-credentials access token; an app may revoke only grants made to itself (else 403).',
        }),
        params: UserAppParams,
        response: { 204: NoContent, ...authErrors },
      },
    },
    async (req, reply) => {
      if (!req.headers.authorization) throw unauthorized();
      const clientId = await verifyAppToken(ctx, req.headers.authorization);
      if (clientId !== req.params.appId) throw forbidden([], 'an app may only revoke grants made to itself');
      await revokeGrant(ctx, req.params.userId, req.params.appId, null);
      return reply.code(204).send(null);
    },
  );

  // Account deletion -----------------------------------------------------------------------------
  app.delete(
    '/users/me',
    {
      schema: {
        ...doc('deleteMyAccount', "Delete the caller's account"),
        response: { 204: NoContent, ...authErrors },
      },
      preHandler: [auth, requireAccessToken, ctx.rateLimits.guard('usersMeWrite', userOf)],
    },
    async (req, reply) => {
      await deleteAccount(ctx, principalOf(req).userId);
      return reply.code(204).send(null);
    },
  );

  // Admin lookups --------------------------------------------------------------------------------
  const admin = [
    auth,
    requireSystemPermission(ctx, 'admin.users.view'),
    requireKeyScope('admin.users.view'),
    ctx.rateLimits.guard('usersFind', (req) => req.principal?.apiKeyId ?? req.principal?.userId),
  ];

  app.post(
    '/users/find-by-identifier',
    {
      schema: {
        ...doc('findUserByIdentifier', 'Look a user up by id, username or wallet (system admin)'),
        body: FindByIdentifierBody,
        response: { 200: MaybeUser, ...authErrors },
      },
      preHandler: admin,
    },
    async (req) => findByIdentifier(ctx, req.body.identifier),
  );

  app.post(
    '/users/find-by-wallets',
    {
      schema: {
        ...doc('findUsersByWallets', 'Look users up by wallet addresses (system admin)'),
        body: FindByWalletsBody,
        response: { 200: FindByWalletsResult, ...authErrors },
      },
      preHandler: admin,
    },
    async (req) => ({ results: await findByWallets(ctx, req.body.addresses) }),
  );
};
