/** What each app type starts with in the create form: the interface's defaults, per type. */
export type AppType = 'web' | 'spa' | 'native' | 'm2m' | 'agent';

export type GrantType =
  | 'authorization_code'
  | 'refresh_token'
  | 'client_credentials'
  | 'urn:ietf:params:oauth:grant-type:device_code';

export const GRANT_LABELS: Record<GrantType, string> = {
  authorization_code: 'Authorization code',
  refresh_token: 'Refresh token',
  client_credentials: 'Client credentials',
  'urn:ietf:params:oauth:grant-type:device_code': 'Device code',
};

export interface AppTypeDefaults {
  label: string;
  hint: string;
  isConfidential: boolean;
  grants: GrantType[];
  scopes: string[];
  needsRedirectUris: boolean;
}

export const APP_TYPE_DEFAULTS: Record<AppType, AppTypeDefaults> = {
  web: {
    label: 'Web app',
    hint: 'A server-rendered app that keeps a client secret.',
    isConfidential: true,
    grants: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    needsRedirectUris: true,
  },
  spa: {
    label: 'Single-page app',
    hint: 'A browser app: public client, PKCE, no secret.',
    isConfidential: false,
    grants: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email'],
    needsRedirectUris: true,
  },
  native: {
    label: 'Native app',
    hint: 'A mobile or desktop app: public client with PKCE and loopback or custom-scheme redirects.',
    isConfidential: false,
    grants: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    scopes: ['openid', 'profile', 'offline_access'],
    needsRedirectUris: true,
  },
  m2m: {
    label: 'Machine to machine',
    hint: 'A backend service calling APIs as itself with the client-credentials grant.',
    isConfidential: true,
    grants: ['client_credentials'],
    scopes: [],
    needsRedirectUris: false,
  },
  agent: {
    label: 'Agent',
    hint: 'An agent or CLI that signs a user in on another device (device flow).',
    isConfidential: false,
    grants: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'offline_access'],
    needsRedirectUris: false,
  },
};

/** One URI per line in the form; blank lines dropped, duplicates folded. */
export function parseUriList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/\r?\n/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** The `openid-client` snippet of the integrate panel, for this app. */
export function openidClientSnippet(opts: {
  issuer: string;
  clientId: string;
  isConfidential: boolean;
  redirectUri?: string;
  scopes: string[];
}): string {
  const secret = opts.isConfidential ? `\n  process.env.GATEHOUSE_CLIENT_SECRET,` : '';
  const scope = (opts.scopes.length ? opts.scopes : ['openid']).join(' ');
  const redirect = opts.redirectUri ?? 'https://app.example.com/callback';
  return `import * as client from 'openid-client';

const config = await client.discovery(
  new URL('${opts.issuer}'),
  '${opts.clientId}',${secret}
);

const code_verifier = client.randomPKCECodeVerifier();
const code_challenge = await client.calculatePKCECodeChallenge(code_verifier);
const redirectTo = client.buildAuthorizationUrl(config, {
  redirect_uri: '${redirect}',
  scope: '${scope}',
  code_challenge,
  code_challenge_method: 'S256',
});
// …after the redirect back to ${redirect}:
const tokens = await client.authorizationCodeGrant(config, currentUrl, {
  pkceCodeVerifier: code_verifier,
});`;
}
