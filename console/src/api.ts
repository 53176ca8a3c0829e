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

/**
 * `POST /files` with upload progress, which fetch cannot report: the one request the console sends
 * without the typed client (XMLHttpRequest), with the same token, refresh and error envelope.
 */
export async function uploadFile(
  file: File,
  onProgress: (loaded: number, total: number) => void,
): Promise<{ id: string; url: string; contentType: string; bytes: number }> {
  const send = (token: string | null) =>
    new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `${window.location.origin}/files`);
      if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
      xhr.responseType = 'json';
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
      xhr.onload = () => resolve({ status: xhr.status, body: xhr.response });
      xhr.onerror = () => reject(toProblem(0, null));
      const form = new FormData();
      form.append('file', file);
      xhr.send(form);
    });
  let res = await send(await accessToken());
  if (res.status === 401) {
    const renewed = await accessToken(true);
    if (!renewed) {
      sessionExpired();
      throw toProblem(401, res.body);
    }
    res = await send(renewed);
  }
  if (res.status < 200 || res.status >= 300) throw toProblem(res.status, res.body);
  return res.body as { id: string; url: string; contentType: string; bytes: number };
}
