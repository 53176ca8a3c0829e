// What every example needs from a local Gatehouse: its URL, a console token, the management API,
// and a fresh org to work in. Plain Node (fetch, child_process): nothing to install.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/gatehouse.mjs', import.meta.url));

/** The issuer: GATEHOUSE_URL, else BASE_URL, else http://localhost:$PORT (as the server decides it). */
export const GATEHOUSE = (
  process.env.GATEHOUSE_URL ??
  process.env.BASE_URL ??
  `http://localhost:${process.env.PORT ?? 3000}`
).replace(/\/+$/, '');

/**
 * `gatehouse dev <args>` of this repository (a development wallet in DATA_DIR signed in through the
 * real flow). Its progress lines go to our stderr; its answer is returned.
 */
export async function gatehouseDev(...args) {
  const { stdout, stderr } = await run(process.execPath, [CLI, 'dev', ...args], {
    env: { ...process.env, BASE_URL: GATEHOUSE },
  }).catch((e) => {
    throw new Error(`gatehouse dev ${args[0]} failed: ${e.stderr || e.message}`);
  });
  if (stderr) process.stderr.write(stderr.replace(/^npm warn.*\n/gm, ''));
  return stdout.trim();
}

/** A console token: GATEHOUSE_TOKEN when set, else one for the development wallet. */
export async function consoleToken() {
  return process.env.GATEHOUSE_TOKEN || gatehouseDev('token');
}

/** Calls the REST API; answers the parsed body, throws with the error envelope on a non-2xx. */
export async function api(token, method, path, body) {
  const res = await fetch(`${GATEHOUSE}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const err = new Error(
      `${method} ${path}: HTTP ${res.status} ${parsed?.error?.code ?? ''} ${parsed?.error?.message ?? text}`,
    );
    err.status = res.status;
    err.body = parsed;
    throw err;
  }
  return parsed;
}

/** A new org for one run of an example (slugs are global, so each run gets its own). */
export async function createOrg(token, prefix) {
  const slug = `${prefix}-${randomBytes(4).toString('hex')}`;
  return api(token, 'POST', '/identity/organizations', { name: `Example ${prefix}`, slug });
}

/** A brand in `org`, its slug unique to this run (it becomes the access tokens' audience). */
export async function createBrand(token, org, prefix, fields = {}) {
  const slug = `${prefix}-${randomBytes(4).toString('hex')}`;
  return api(token, 'POST', `/identity/organizations/${org.slug}/brands`, {
    slug,
    name: `Example ${prefix}`,
    ...fields,
  });
}

/** One line of what the example did, for the reader (and the example's test). */
export function say(line) {
  console.log(line);
}
