import { anyOriginMayRead, grantPreflight } from '../http/cors.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { OAuthError } from '../http/errors.js';
import { ErrorEnvelope, OAuthErrorBody } from '../http/schemas.js';
import { authenticateClient } from './client-auth.js';
import { deviceAuthorize } from './device-authorize.js';
import { introspectToken } from './introspect.js';
import { revocationCheck } from './revocation.js';
import { revokeToken } from './revoke.js';
import { tokenEndpoint } from './token-endpoint.js';
import { userinfo } from './userinfo.js';
import { routeDoc } from '../http/route-doc.js';

const oauth = routeDoc('OAuth');

/** A form field: one string (a repeated field arrives as an array and is refused, RFC 6749 §3.2). */
const Field = Type.String({ maxLength: 4096 });

const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Field),
    client_id: Type.Optional(Field),
    client_secret: Type.Optional(Field),
    code: Type.Optional(Field),
    redirect_uri: Type.Optional(Field),
    code_verifier: Type.Optional(Field),
    refresh_token: Type.Optional(Field),
    scope: Type.Optional(Field),
    device_code: Type.Optional(Field),
  },
  { additionalProperties: Field },
);

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  id_token: Type.Optional(Type.String()),
});

const TokenOnlyBody = Type.Object(
  {
    token: Type.Optional(Field),
    token_type_hint: Type.Optional(Field),
    client_id: Type.Optional(Field),
    client_secret: Type.Optional(Field),
  },
  { additionalProperties: Field },
);

const IntrospectionResponse = Type.Object({
  active: Type.Boolean(),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  token_type: Type.Optional(Type.String()),
  exp: Type.Optional(Type.Integer()),
  iat: Type.Optional(Type.Integer()),
  sub: Type.Optional(Type.String()),
  iss: Type.Optional(Type.String()),
  aud: Type.Optional(Type.String()),
});

const DeviceBody = Type.Object(
  { client_id: Type.Optional(Field), client_secret: Type.Optional(Field), scope: Type.Optional(Field) },
  { additionalProperties: Field },
);

const DeviceResponse = Type.Object({
  device_code: Type.String(),
  user_code: Type.String(),
  verification_uri: Type.String(),
  verification_uri_complete: Type.String(),
  expires_in: Type.Integer(),
  interval: Type.Integer(),
});

const UserinfoResponse = Type.Object({
  sub: Type.String(),
  preferred_username: Type.Optional(Type.String()),
  given_name: Type.Optional(Type.String()),
  family_name: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  wallet_address: Type.Optional(Type.String({ description: 'the primary Solana address (`wallet` scope)' })),
  wallets: Type.Optional(
    Type.Array(
      Type.Object({ address: Type.String(), chain: Type.Literal('solana'), isPrimary: Type.Boolean() }),
      { description: 'every linked wallet, `[]` when none (`wallet` scope)' },
    ),
  ),
});

const oauthErrors = {
  400: OAuthErrorBody,
  401: OAuthErrorBody,
  429: OAuthErrorBody,
  500: OAuthErrorBody,
  503: OAuthErrorBody,
};

/** The /oauth2 POST endpoints take form bodies only (interface: "The /oauth2/* POST bodies are form-encoded"). */
async function formOnly(req: FastifyRequest): Promise<void> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type))
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
}

function required(value: string | undefined, field: string): string {
  if (!value) throw new OAuthError('invalid_request', `${field} is required`);
  return value;
}

/**
 * The token side of the issuer: token, revoke, introspect, device authorization and userinfo.
 * Registers the issuer's access-token check (revoked jtis, disabled apps, deleted users). Its
 * sweeper of expired rows is in src/jobs.
 */
export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  ctx.hooks.accessTokenChecks.push(revocationCheck(ctx));

  app.post(
    '/oauth2/token',
    {
      schema: {
        ...oauth(
          'token',
          'Exchange a code, a refresh token, client credentials or a device code for tokens',
          {
            auth: 'client',
            consumes: ['application/x-www-form-urlencoded'],
            description:
              'Grant types: `authorization_code` (with `code_verifier`), `refresh_token` (rotated on use; a reused one revokes the grant), `client_credentials` (confidential apps) and `urn:ietf:params:oauth:grant-type:device_code`. OAuth errors: `invalid_request`, `invalid_client` (401), `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `authorization_pending`, `slow_down`, `expired_token`, `access_denied`.',
          },
        ),
        body: TokenBody,
        response: { 200: TokenResponse, ...oauthErrors },
      },
      preValidation: formOnly,
      onSend: anyOriginMayRead,
      // Spent in authenticateClient, by the authenticated client (device polling too, besides the
      // per-device-code pacing).
      config: { clientLimit: 'token' },
    },
    async (req, reply) => {
      const tokens = await tokenEndpoint(ctx, req, req.body);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    },
  );

  app.post(
    '/oauth2/revoke',
    {
      schema: {
        ...oauth('revokeToken', 'Revoke a refresh or access token (RFC 7009)', {
          auth: 'client',
          consumes: ['application/x-www-form-urlencoded'],
          description: 'Answers 200 with an empty body whether or not the token was known.',
        }),
        body: TokenOnlyBody,
        response: { 200: Type.String({ maxLength: 0 }), ...oauthErrors },
      },
      preValidation: formOnly,
      onSend: anyOriginMayRead,
      config: { clientLimit: 'revoke' },
    },
    async (req, reply) => {
      const client = await authenticateClient(ctx, req, req.body);
      await revokeToken(ctx, client, required(req.body.token, 'token'), req.body.token_type_hint);
      return reply.code(200).header('cache-control', 'no-store').send('');
    },
  );

  app.post(
    '/oauth2/introspect',
    {
      schema: {
        ...oauth('introspectToken', 'Introspect a token (RFC 7662)', {
          auth: 'client',
          consumes: ['application/x-www-form-urlencoded'],
          description:
            'An app sees only its own tokens (and its brand\'s); anything else is `{ "active": false }`.',
        }),
        body: TokenOnlyBody,
        response: { 200: IntrospectionResponse, ...oauthErrors },
      },
      preValidation: formOnly,
      config: { clientLimit: 'introspect' },
    },
    async (req, reply) => {
      const client = await authenticateClient(ctx, req, req.body, { confidentialOnly: true });
      const result = await introspectToken(ctx, client, required(req.body.token, 'token'), req.ip);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(result);
    },
  );

  app.post(
    '/oauth2/device/authorize',
    {
      schema: {
        ...oauth('deviceAuthorize', 'Start a device sign-in (RFC 8628)', {
          auth: 'client',
          consumes: ['application/x-www-form-urlencoded'],
          description:
            'Answers `device_code`, `user_code` and the verification URIs; poll `/oauth2/token` with the device code.',
        }),
        body: DeviceBody,
        response: { 200: DeviceResponse, ...oauthErrors },
      },
      preValidation: formOnly,
      config: { clientLimit: 'deviceAuthorize' },
    },
    async (req, reply) => {
      const result = await deviceAuthorize(ctx, req, req.body);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(result);
    },
  );

  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/userinfo',
      schema: {
        ...oauth(
          `${method === 'GET' ? 'get' : 'post'}Userinfo`,
          "The signed-in user's claims (OpenID Connect UserInfo)",
          {
            auth: 'accessToken',
            rateLimits: ['userinfo'],
            description:
              "Claims by the token's scopes: `sub`; `profile` adds the username and picture; `wallet` the wallets (`wallet_address`, `wallets`). POST also takes the token as the form field `access_token` instead of the header.",
          },
        ),
        ...(method === 'POST' ? { body: Type.Object({ access_token: Type.Optional(Field) }) } : {}),
        // POST: a body its schema refuses (a repeated or overlong access_token) is 400 validation_failed.
        response: {
          200: UserinfoResponse,
          ...(method === 'POST' ? { 400: ErrorEnvelope } : {}),
          401: ErrorEnvelope,
          429: ErrorEnvelope,
        },
      },
      // A POST with the token in the header may have no body at all.
      preValidation: async (req) => {
        req.body ??= {};
      },
      onSend: anyOriginMayRead,
      handler: async (req, reply) => {
        const body = await userinfo(ctx, req, reply);
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
      },
    });
  }

  // A single-page app (a public client) redeems its code, refreshes, revokes and reads claims from
  // its own origin: see src/http/cors.ts for why any origin may.
  grantPreflight(app, '/oauth2/token', ['POST'], ['authorization', 'content-type']);
  grantPreflight(app, '/oauth2/revoke', ['POST'], ['authorization', 'content-type']);
  grantPreflight(app, '/userinfo', ['GET', 'POST'], ['authorization', 'content-type']);
};
