import { asObject, httpUrl, type OAuthProviderDefinition, str } from './provider.js';

/** Discord: OAuth 2.0 with PKCE; the identity is `GET /users/@me`. */
export const discord: OAuthProviderDefinition = {
  kind: 'oauth',
  type: 'discord',
  oidc: false,
  pkce: true,
  clientAuth: 'client_secret_post',
  defaultScopes: ['identify', 'email'],
  endpoints: {
    authorizationUrl: 'https://discord.com/oauth2/authorize',
    tokenUrl: 'https://discord.com/api/oauth2/token',
    userinfoUrl: 'https://discord.com/api/users/@me',
    revocationUrl: 'https://discord.com/api/oauth2/token/revoke',
  },
  async identity({ endpoints, fetchJson }) {
    const me = asObject(await fetchJson(endpoints.userinfoUrl!));
    const id = str(me.id);
    if (!id) throw new Error('the Discord profile has no id');
    const avatar = str(me.avatar);
    return {
      externalUserId: id,
      email: str(me.email),
      emailVerified: me.verified === true,
      username: str(me.username),
      firstName: str(me.global_name),
      pictureUrl:
        avatar && /^[A-Za-z0-9_]+$/.test(avatar)
          ? httpUrl(`https://cdn.discordapp.com/avatars/${id}/${avatar}.png`)
          : undefined,
    };
  },
};
