import { asObject, httpUrl, type OAuthProviderDefinition, splitName, str } from './provider.js';

/** X (Twitter) OAuth 2.0 with PKCE (required by X); confidential clients use HTTP Basic. */
export const x: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'x',
  oidc: false,
  pkce: true,
  clientAuth: 'client_secret_basic',
  defaultScopes: ['users.read', 'tweet.read', 'offline.access'],
  endpoints: {
    authorizationUrl: 'https://x.com/i/oauth2/authorize',
    tokenUrl: 'https://api.x.com/2/oauth2/token',
    userinfoUrl: 'https://api.x.com/2/users/me',
    revocationUrl: 'https://api.x.com/2/oauth2/revoke',
  },
  async identity({ endpoints, fetchJson }) {
    const url = new URL(endpoints.userinfoUrl!);
    if (!url.searchParams.has('user.fields')) url.searchParams.set('user.fields', 'profile_image_url');
    const data = asObject(asObject(await fetchJson(url.toString())).data);
    const id = str(data.id);
    if (!id) throw new Error('the X profile has no id');
    return {
      externalUserId: id,
      username: str(data.username),
      ...splitName(str(data.name)),
      pictureUrl: httpUrl(data.profile_image_url),
    };
  },
};
