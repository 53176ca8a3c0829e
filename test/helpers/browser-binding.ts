import type { FastifyInstance, InjectOptions } from 'fastify';

/** A request header that makes an injected request come from "another browser" (stripped here). */
export const OTHER_BROWSER = 'x-test-other-browser';

const INTERACTION_URL = /^\/(?:interactions|signin)\/([A-Za-z0-9]+)/;

/**
 * Injected requests play one browser per test app for interactions: the binding cookies
 * (`gh_ia_<id>`) that responses set are kept, and a request to `/interactions/<id>…` or
 * `/signin/<id>…` that sends none for that id gets it, as the browser that started the sign-in
 * would send it. A request that sends its own `gh_ia_<id>` cookie, or the header `OTHER_BROWSER`,
 * goes as it is (tests of the refusal). Real HTTP (the Chromium tests) is untouched.
 */
export function keepInteractionBindings(app: FastifyInstance): void {
  const bindings = new Map<string, string>();
  const inject = app.inject.bind(app);
  const wrapped = (opts?: InjectOptions | string) => {
    if (opts === undefined) return inject();
    const o: InjectOptions = typeof opts === 'string' ? { url: opts } : { ...opts };
    const headers = { ...(o.headers ?? {}) } as Record<string, string | string[] | undefined>;
    const url = typeof o.url === 'string' ? o.url : typeof o.path === 'string' ? o.path : '';
    const id = INTERACTION_URL.exec(url)?.[1];
    if (headers[OTHER_BROWSER] !== undefined) delete headers[OTHER_BROWSER];
    else if (id) {
      const name = `gh_ia_${id}`;
      const value = bindings.get(name);
      const cookie = typeof headers.cookie === 'string' ? headers.cookie : '';
      if (value && !cookie.split(/;\s*/).some((c) => c.startsWith(`${name}=`)))
        headers.cookie = cookie ? `${cookie}; ${name}=${value}` : `${name}=${value}`;
    }
    o.headers = headers;
    return inject(o).then((res) => {
      for (const c of res.cookies as Array<{ name: string; value: string }>) {
        if (!c.name.startsWith('gh_ia_')) continue;
        if (c.value) bindings.set(c.name, c.value);
        else bindings.delete(c.name);
      }
      return res;
    });
  };
  app.inject = wrapped as typeof app.inject;
}
