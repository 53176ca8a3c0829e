// A small API that trusts Gatehouse access tokens: GET /orders needs the `orders:read` scope.
import { createServer } from 'node:http';
import { hasScope, VerificationError } from './verify.mjs';

/** @param {(token: string) => Promise<object>} verify from createVerifier */
export function createResourceServer(verify) {
  return createServer(async (req, res) => {
    const send = (status, body, headers = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (req.method !== 'GET' || req.url !== '/orders') return send(404, { error: 'not_found' });
    const token = /^Bearer ([^\s]+)$/.exec(req.headers.authorization ?? '')?.[1];
    // RFC 6750 §3: say why in WWW-Authenticate.
    if (!token) return send(401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
    let claims;
    try {
      claims = await verify(token);
    } catch (e) {
      if (!(e instanceof VerificationError)) return send(500, { error: 'internal_error' });
      return send(
        401,
        { error: 'invalid_token', reason: e.code },
        { 'www-authenticate': `Bearer error="invalid_token", error_description="${e.code}"` },
      );
    }
    if (!hasScope(claims, 'orders:read'))
      return send(
        403,
        { error: 'insufficient_scope' },
        { 'www-authenticate': 'Bearer error="insufficient_scope", scope="orders:read"' },
      );
    send(200, { caller: claims.sub, client: claims.client_id, orders: [{ id: 'ord_1', total: '12.50' }] });
  });
}
