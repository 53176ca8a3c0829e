import { createGatehouseClient } from '@gatehouse/client';
import { accessToken, sessionExpired } from './auth.js';
import { ApiProblem, toProblem } from './lib/problems.js';

/**
 * The console's only way to the REST API: the typed client generated from `/openapi.json`, with the
 * console token added to each request. A 401 gets one refresh and one retry; when the refresh is
 * refused the session is over and the user goes back through the sign-in, returning here.
 */
async function authorizedFetch(request: Request): Promise<Response> {
  const send = async (token: string | null) => {
    const req = request.clone();
    if (token) req.headers.set('authorization', `Bearer ${token}`);
    return fetch(req);
  };
  const first = await send(await accessToken());
  if (first.status !== 401) return first;
  const renewed = await accessToken(true);
  if (!renewed) {
    sessionExpired();
    return first;
  }
  const second = await send(renewed);
  if (second.status === 401) sessionExpired();
  return second;
}

/** The typed client of `clients/typescript` (@gatehouse/client); tokens are added by `authorizedFetch`. */
export const api = createGatehouseClient({ baseUrl: window.location.origin, fetch: authorizedFetch });

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call, or an ApiProblem carrying the error envelope's fields. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await call;
  } catch {
    throw toProblem(0, null);
  }
  if (result.response.ok) return result.data as T;
  throw toProblem(result.response.status, result.error);
}

export { ApiProblem };
