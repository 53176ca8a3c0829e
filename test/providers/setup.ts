import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { appleKey, followAuthorize, MockProviders } from '../helpers/mock-providers.js';
import {
  authorizeQuery,
  cookieHeader,
  collectCookies,
  randomIp,
  type SeededClient,
} from '../helpers/signin.js';

export const BOT_TOKEN = '123456789:AAFakeTelegramBotTokenForTests_0123456789';
export const BOT_USERNAME = 'gatehouse_test_bot';
export const APPLE = { clientId: 'com.example.signin', teamId: 'TEAM123456', keyId: 'KEY1234567' };

export interface ProviderWorld {
  t: TestApp;
  mock: MockProviders;
  /** Every response the tests received, serialized (headers and body), for leak scans. */
  seen: string[];
  /**
   * The test's browser: the interaction-binding cookies (`gh_ia_<id>`) that /oauth2/authorize set,
   * sent along with every provider return `deliver` makes.
   */
  browser: Record<string, string>;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * One app whose eight providers all point at the local mock through the PROVIDER_<TYPE>_*
 * overrides, with operator default credentials for each (a brand's own connection replaces them).
 */
export async function providerWorld(
  extraEnv: Record<string, string> = {},
  logStream?: { write(line: string): void },
): Promise<ProviderWorld> {
  const clock = new ManualClock(new Date('2026-01-15T12:00:00Z'));
  const mock = await MockProviders.start(() => clock.nowSec());
  const apple = appleKey();
  mock.realm('google', {
    clients: { 'google-client': 'google-secret-0123456789' },
    clientAuth: 'post',
    oidc: true,
    requirePkce: true,
    claims: {
      sub: 'g-1001',
      email: 'ada@example.com',
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
      picture: 'https://pictures.example.com/ada.png',
    },
  });
  mock.realm('apple', {
    clients: { [APPLE.clientId]: '' },
    clientAuth: 'apple-jwt',
    apple: { teamId: APPLE.teamId, keyId: APPLE.keyId, publicKey: apple.publicKey },
    oidc: true,
    claims: { sub: 'apple-000123.abc', email: 'relay@privaterelay.appleid.com', email_verified: 'true' },
    appleUser: { name: { firstName: 'Grace', lastName: 'Hopper' }, email: 'relay@privaterelay.appleid.com' },
  });
  mock.realm('microsoft', {
    clients: { 'ms-client': 'ms-secret-0123456789' },
    clientAuth: 'post',
    oidc: true,
    requirePkce: true,
    claims: {
      sub: 'ms-pairwise-sub',
      tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      preferred_username: 'alan@example.com',
      name: 'Alan Turing',
    },
  });
  mock.realm('discord', {
    clients: { 'discord-client': 'discord-secret-0123456789' },
    clientAuth: 'post',
    requirePkce: true,
    profile: {
      id: '80351110224678912',
      username: 'nelly',
      global_name: 'Nelly',
      avatar: '8342729096ea3675442027381ff50dfe',
      email: 'nelly@example.com',
      verified: true,
    },
  });
  mock.realm('facebook', {
    clients: { 'fb-client': 'fb-secret-0123456789' },
    clientAuth: 'post',
    requirePkce: true,
    profile: {
      id: '10150000000000001',
      first_name: 'Mark',
      last_name: 'Example',
      email: 'mark@example.com',
      picture: { data: { url: 'https://pictures.example.com/mark.jpg' } },
    },
  });
  mock.realm('x', {
    clients: { 'x-client': 'x-secret-0123456789' },
    clientAuth: 'basic',
    requirePkce: true,
    profile: {
      data: {
        id: '2244994945',
        name: 'Jack Dorsey',
        username: 'jack-x',
        profile_image_url: 'https://pictures.example.com/jack.png',
      },
    },
  });
  mock.realm('matrica', {
    clients: { 'matrica-client': 'matrica-secret-0123456789' },
    clientAuth: 'post',
    requirePkce: true,
    profile: { id: 'mat-42', username: 'collector' },
    wallets: [{ id: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', networkSymbol: 'SOL' }],
  });
  const env: Record<string, string> = {
    ...mock.env('google', 'google'),
    ...mock.env('apple', 'apple', {
      PROVIDER_APPLE_CLIENT_ID: APPLE.clientId,
      PROVIDER_APPLE_TEAM_ID: APPLE.teamId,
      PROVIDER_APPLE_KEY_ID: APPLE.keyId,
      PROVIDER_APPLE_PRIVATE_KEY: apple.privateKeyPem,
    }),
    ...mock.env('microsoft', 'microsoft'),
    ...mock.env('discord', 'discord'),
    ...mock.env('facebook', 'facebook'),
    ...mock.env('x', 'x'),
    ...mock.env('matrica', 'matrica'),
    PROVIDER_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    PROVIDER_TELEGRAM_BOT_USERNAME: BOT_USERNAME,
    ...extraEnv,
  };
  mock.issued.push(BOT_TOKEN, apple.privateKeyPem);
  const t = await buildTestApp({ env, clock, logStream });
  const seen: string[] = [];
  return {
    t,
    mock,
    seen,
    browser: {},
    async inject(opts) {
      const res = await t.app.inject(opts);
      seen.push(JSON.stringify({ headers: res.headers, body: res.body }));
      return res;
    },
    async close() {
      await t.close();
      await mock.close();
    },
  };
}

/** GET /oauth2/authorize for `client`; returns the interaction id. */
export async function startInteraction(
  w: ProviderWorld,
  client: SeededClient,
  ip = randomIp(),
): Promise<string> {
  const res = await w.inject({
    method: 'GET',
    url: `/oauth2/authorize?${authorizeQuery(client)}`,
    remoteAddress: ip,
  });
  assert.equal(res.statusCode, 302, res.body);
  collectCookies(res, w.browser);
  const m = /\/signin\/([A-Za-z0-9]+)$/.exec(res.headers.location as string);
  assert.ok(m, `expected the sign-in page, got ${res.headers.location}`);
  return m[1];
}

/** The path and query of an absolute URL of the app. */
export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/**
 * Starts the trip at `/interactions/:id/providers/:type`, lets the mock answer, and delivers the
 * return to the app's callback (GET, or Apple's form POST). Returns the callback's response.
 */
export async function providerSignIn(
  w: ProviderWorld,
  interactionId: string,
  type: string,
  jar: Record<string, string> = {},
): Promise<{ res: LightMyRequestResponse; authorizeUrl: URL; jar: Record<string, string> }> {
  const start = await w.inject({
    method: 'GET',
    url: `/interactions/${interactionId}/providers/${type}`,
    remoteAddress: randomIp(),
    headers: { cookie: cookieHeader(jar) },
  });
  assert.equal(start.statusCode, 302, start.body);
  const authorizeUrl = new URL(start.headers.location as string);
  const res = await deliver(w, await followAuthorize(authorizeUrl.toString()), jar);
  return { res, authorizeUrl, jar };
}

/** Delivers the provider's return to the app, from the test's browser (`w.browser`) unless `bound` is false. */
export async function deliver(
  w: ProviderWorld,
  back: Awaited<ReturnType<typeof followAuthorize>>,
  jar: Record<string, string> = {},
  bound = true,
): Promise<LightMyRequestResponse> {
  const cookies = bound ? { ...w.browser, ...jar } : jar;
  const res =
    back.method === 'GET'
      ? await w.inject({ method: 'GET', url: pathOf(back.url), headers: { cookie: cookieHeader(cookies) } })
      : await w.inject({
          method: 'POST',
          url: pathOf(back.url),
          payload: new URLSearchParams(back.form).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(cookies) },
        });
  collectCookies(res, jar);
  return res;
}

/** The error a return to the sign-in page carries, or null when it went elsewhere. */
export function signinError(res: LightMyRequestResponse, interactionId: string): string | null {
  const location = String(res.headers.location ?? '');
  const u = new URL(location, 'http://x');
  if (!u.pathname.endsWith(`/signin/${interactionId}`)) return null;
  return u.searchParams.get('error');
}

/**
 * Answers a link's confirmation page from the browser holding `jar`: posts the page's own form
 * (action and CSRF token read from the HTML) with `decision`.
 */
export async function answerLinkPage(
  w: ProviderWorld,
  page: LightMyRequestResponse,
  jar: Record<string, string>,
  decision: 'confirm' | 'cancel' = 'confirm',
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1];
  assert.ok(action && csrf, `expected the link confirmation page, got ${page.statusCode}: ${page.body}`);
  const res = await w.inject({
    method: 'POST',
    url: action,
    payload: new URLSearchParams({ csrf_token: csrf, decision }).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://gatehouse.test',
      cookie: cookieHeader(jar),
      ...headers,
    },
  });
  collectCookies(res, jar);
  return res;
}
