import { asObject, httpUrl, type OAuthProviderDefinition, str } from './provider.js';

const FIELDS = 'id,first_name,last_name,email,picture.type(large)';

/** Facebook Login: OAuth 2.0 with PKCE; the identity is the Graph API's `/me`. */
export const facebook: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'facebook',
  oidc: false,
  pkce: true,
  clientAuth: 'client_secret_post',
  defaultScopes: ['public_profile', 'email'],
  endpoints: {
    authorizationUrl: 'https://www.facebook.com/v19.0/dialog/oauth',
    tokenUrl: 'https://graph.facebook.com/v19.0/oauth/access_token',
    userinfoUrl: 'https://graph.facebook.com/v19.0/me',
  },
  async identity({ endpoints, fetchJson }) {
    const url = new URL(endpoints.userinfoUrl!);
    if (!url.searchParams.has('fields')) url.searchParams.set('fields', FIELDS);
    const me = asObject(await fetchJson(url.toString()));
    const id = str(me.id);
    if (!id) throw new Error('the Facebook profile has no id');
    return {
      externalUserId: id,
      email: str(me.email),
      // Facebook does not say whether the address was confirmed.
      emailVerified: false,
      firstName: str(me.first_name),
      lastName: str(me.last_name),
      pictureUrl: httpUrl(asObject(asObject(me.picture).data).url),
    };
  },
};
