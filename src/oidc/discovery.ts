import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../config/defaults.js';
import type { Config } from '../config/index.js';
import { routeDoc } from '../http/route-doc.js';
import { ErrorEnvelope } from '../http/schemas.js';

const doc = routeDoc('Discovery');
const Url = Type.String({ format: 'uri' });

/** The discovery document as described (the route sends a pre-serialised string). */
const DiscoverySchema = Type.Object(
  {
    issuer: Url,
    authorization_endpoint: Url,
    token_endpoint: Url,
    userinfo_endpoint: Url,
    revocation_endpoint: Url,
    introspection_endpoint: Url,
    jwks_uri: Url,
    device_authorization_endpoint: Url,
    response_types_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    id_token_signing_alg_values_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    subject_types_supported: Type.Array(Type.String()),
    claims_supported: Type.Array(Type.String()),
  },
  { additionalProperties: true },
);

const JwksSchema = Type.Object({
  keys: Type.Array(
    Type.Object(
      {
        kty: Type.String(),
        kid: Type.String(),
        use: Type.Optional(Type.String()),
        alg: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
  ),
});

export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
/**
 * Scopes every app may list in `allowedScopes` without a brand vocabulary: the OIDC ones, `wallet`
 * (the user's Solana wallets as claims, DESIGN.md §3 "Sessions, logout and wallet claims") and
 * `gates` (DESIGN §3 "Gates in tokens").
 */
export const STANDARD_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'wallet', 'gates'] as const;

export function discoveryDocument(config: Config) {
  const u = (path: string) => `${config.issuer}${path}`;
  return {
    issuer: config.issuer,
    authorization_endpoint: u('/oauth2/authorize'),
    token_endpoint: u('/oauth2/token'),
    userinfo_endpoint: u('/userinfo'),
    revocation_endpoint: u('/oauth2/revoke'),
    introspection_endpoint: u('/oauth2/introspect'),
    jwks_uri: u('/.well-known/jwks.json'),
    device_authorization_endpoint: u('/oauth2/device/authorize'),
    // OpenID RP-Initiated and Back-Channel Logout 1.0 (DESIGN.md §3 "Sessions, logout…").
    end_session_endpoint: u('/oauth2/logout'),
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: false,
    // Request objects and the claims parameter are refused (request_not_supported, …).
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    response_types_supported: ['code'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: [...STANDARD_SCOPES],
    subject_types_supported: ['public'],
    response_modes_supported: ['query'],
    authorization_response_iss_parameter_supported: true,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'sid',
      'email',
      'email_verified',
      'given_name',
      'family_name',
      'preferred_username',
      'picture',
      'locale',
      'wallet_address',
      'wallets',
      'gates',
    ],
  };
}

/**
 * Discovery and JWKS, served from pre-serialised strings: discovery is built once; the JWKS string
 * is rebuilt only when the key set changes. Cache headers follow the interface's caching advice.
 */
export const wellKnownRoutes: FastifyPluginAsync = async (app) => {
  const ctx = app.ctx;
  const discovery = JSON.stringify(discoveryDocument(ctx.config));
  const limit = ctx.rateLimits.guard('wellKnown', (req) => ctx.rateLimits.source(req));

  app.get(
    '/.well-known/openid-configuration',
    {
      schema: {
        ...doc('getOpenIdConfiguration', 'OpenID Connect discovery'),
        response: { 200: DiscoverySchema, 429: ErrorEnvelope },
      },
      preHandler: limit,
    },
    async (_req, reply) => {
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', `public, max-age=${defaults.discoveryMaxAge}`)
        .header('access-control-allow-origin', '*');
      return reply.send(discovery);
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        ...doc('getJwks', 'The public keys that sign tokens (JWKS)'),
        response: { 200: JwksSchema, 429: ErrorEnvelope },
      },
      preHandler: limit,
    },
    async (_req, reply) => {
      const body = await ctx.keys.jwks();
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', `public, max-age=${defaults.jwksMaxAge}`)
        .header('access-control-allow-origin', '*');
      return reply.send(body);
    },
  );
};
