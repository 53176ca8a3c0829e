import createClient from 'openapi-fetch';

/**
 * A client of the Gatehouse API: openapi-fetch typed by the generated `paths`. `token` (a console
 * access token or a user API key, or a function answering one) is sent as a bearer token.
 */
export function createGatehouseClient({ baseUrl, token, headers, fetch } = {}) {
  if (!baseUrl) throw new TypeError('createGatehouseClient: baseUrl is required');
  const client = createClient({ baseUrl: baseUrl.replace(/\/+$/, ''), headers, fetch });
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === 'function' ? await token() : token;
        if (value) request.headers.set('authorization', `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}
