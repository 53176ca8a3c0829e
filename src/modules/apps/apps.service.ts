import type { Updateable } from 'kysely';
import type { Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { mapDbError } from '../../http/db-conflicts.js';
import type { AppRow, AppsTable, BrandRow, Executor, OrgRow } from '../../db/schema.js';
import { diff, recordMutation } from '../../events/outbox.js';
import { type FieldError, notFound, unprocessable, validationFailed } from '../../http/errors.js';
import { sha256 } from '../../lib/hash.js';
import { newId, newSecret, randomAlphanumeric } from '../../lib/ids.js';
import { clientSecretMatches } from '../../oidc/client-auth.js';
import { STANDARD_SCOPES } from '../../oidc/discovery.js';
import { checkGatePolicyReference } from '../../oidc/gates.js';
import { lockBrand, requireBrand } from '../brands/brands.service.js';
import { scopeNames } from '../scopes/scopes.queries.js';
import { appChangeCommitted, notifyAppChanged } from './apps.notify.js';
import * as q from './apps.queries.js';
import type { App, AppCreateBody, AppCreated, AppPatchBody, AppType } from './apps.schemas.js';

export { onAppChanged } from './apps.notify.js';

type AppOut = Static<typeof App>;

/** Client ids: 24 random alphanumerics (~143 bits), not derived from anything guessable. */
const CLIENT_ID_LENGTH = 24;
const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

export function toApp(row: AppRow, brandSlug: string): AppOut {
  return {
    id: row.id,
    brand: brandSlug,
    org: row.org_id,
    clientId: row.client_id,
    name: row.name,
    type: row.type,
    isConfidential: row.is_confidential,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    backchannelLogoutUri: row.backchannel_logout_uri,
    allowedGrantTypes: row.allowed_grant_types,
    allowedScopes: row.allowed_scopes,
    enabled: row.enabled,
    description: row.description,
    requiredGatePolicyId: row.required_gate_policy_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Timing-safe check of a presented client secret against the stored SHA-256 (the issuer's one check). */
export function verifyClientSecret(app: Pick<AppRow, 'client_secret_hash'>, presented: string): boolean {
  return clientSecretMatches(app.client_secret_hash, presented);
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);
/** Hosts any app may use over http while NODE_ENV is not production (DESIGN §3, local development). */
const LOCAL_DEV_HOSTS = new Set(['localhost', '127.0.0.1']);
/** RFC 8252 §7.1: a private-use scheme is a reverse domain name, so it contains a dot. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/;

/**
 * Redirect URIs are matched as exact strings at /oauth2/authorize, so they are stored as sent. Every
 * app may use HTTPS URLs without fragment or credentials. Native apps (RFC 8252) may also use the
 * loopback IP literals over HTTP (`http://127.0.0.1:<port>/…`, `http://[::1]:<port>/…`; not
 * `localhost`) and private-use schemes named after a domain (`com.example.app:/callback`). With
 * `localDev` (NODE_ENV is not production) any app may also use `http://localhost[:port]/…` and
 * `http://127.0.0.1[:port]/…`.
 */
export function redirectUriError(
  uri: string,
  type: AppType,
  field: string,
  opts: { localDev?: boolean } = {},
): FieldError | null {
  const bad = (message: string): FieldError => ({ field, code: 'invalid_format', message });
  if (/\s/.test(uri)) return bad('must not contain whitespace');
  if (uri.includes('#')) return bad('must not contain a fragment');
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return bad('must be an absolute URL');
  }
  if (u.username || u.password) return bad('must not carry credentials');
  if (u.protocol === 'https:') return u.hostname ? null : bad('must name a host');
  if (opts.localDev && u.protocol === 'http:' && LOCAL_DEV_HOSTS.has(u.hostname)) return null;
  if (type !== 'native') return bad('must be an HTTPS URL');
  if (u.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(u.hostname)
      ? null
      : bad('native apps may use http only with the loopback address 127.0.0.1 or [::1]');
  }
  const scheme = u.protocol.slice(0, -1);
  return PRIVATE_USE_SCHEME.test(scheme)
    ? null
    : bad('must be HTTPS, a loopback http URL, or a private-use scheme such as com.example.app:/callback');
}

/** Hosts a back-channel logout URI names only under WEBHOOK_ALLOW_PRIVATE_NETWORKS (checked again at connect time). */
const PRIVATE_HOST =
  /^(localhost|127\.\d+\.\d+\.\d+|\[::1?\]|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|169\.254\.\d+\.\d+|0\.0\.0\.0)$/i;

/**
 * A back-channel logout URI follows the webhook URL rules: HTTPS, a host, no credentials or
 * fragment; a private or loopback address only with `allowPrivate` (the delivery client refuses
 * them at connect time too, after DNS).
 */
export function backchannelUriError(uri: string, allowPrivate: boolean): FieldError | null {
  const bad = (message: string): FieldError => ({
    field: 'backchannelLogoutUri',
    code: 'invalid_format',
    message,
  });
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return bad('must be an absolute URL');
  }
  if (u.protocol !== 'https:') return bad('must be an HTTPS URL');
  if (u.username || u.password) return bad('must not carry credentials');
  if (uri.includes('#')) return bad('must not contain a fragment');
  if (!u.hostname) return bad('must name a host');
  if (!allowPrivate && PRIVATE_HOST.test(u.hostname))
    return bad('must not name a private or loopback address');
  return null;
}

interface AppConfig {
  type: AppType;
  isConfidential: boolean;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: a back-channel logout URI may name a private address. */
  allowPrivateNetworks?: boolean;
  allowedGrantTypes: string[];
  allowedScopes: string[];
  /** NODE_ENV is not production: local http redirect URIs are allowed (see redirectUriError). */
  localDev?: boolean;
}

/** Every rule that ties an app's fields together; returns all violations at once. */
export function appConfigErrors(cfg: AppConfig, brandScopes: Set<string>): FieldError[] {
  const errors: FieldError[] = [];
  cfg.redirectUris.forEach((uri, i) => {
    const e = redirectUriError(uri, cfg.type, `redirectUris.${i}`, { localDev: cfg.localDev });
    if (e) errors.push(e);
  });
  (cfg.postLogoutRedirectUris ?? []).forEach((uri, i) => {
    const e = redirectUriError(uri, cfg.type, `postLogoutRedirectUris.${i}`, { localDev: cfg.localDev });
    if (e) errors.push(e);
  });
  if (cfg.backchannelLogoutUri) {
    const e = backchannelUriError(cfg.backchannelLogoutUri, cfg.allowPrivateNetworks === true);
    if (e) errors.push(e);
  }
  const grants = new Set(cfg.allowedGrantTypes);
  const grantError = (message: string) =>
    errors.push({ field: 'allowedGrantTypes', code: 'invalid_value', message });
  if (cfg.type === 'm2m' && (grants.size !== 1 || !grants.has('client_credentials')))
    grantError('m2m apps may only use client_credentials');
  if (!cfg.isConfidential && grants.has('client_credentials'))
    grantError('public clients cannot use client_credentials');
  if (grants.has('refresh_token') && !grants.has('authorization_code') && !grants.has(DEVICE_CODE))
    grantError('refresh_token requires authorization_code or the device_code grant');
  if (grants.has('authorization_code') && cfg.redirectUris.length === 0)
    errors.push({
      field: 'redirectUris',
      code: 'required',
      message: 'at least one redirect URI is required with authorization_code',
    });
  for (const scope of cfg.allowedScopes) {
    if (!(STANDARD_SCOPES as readonly string[]).includes(scope) && !brandScopes.has(scope))
      errors.push({
        field: 'allowedScopes',
        code: 'unknown_scope',
        message: `unknown scope "${scope}": neither a standard OIDC scope nor one of the brand's scopes`,
      });
  }
  return errors;
}

export async function createApp(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  body: Static<typeof AppCreateBody>,
): Promise<Static<typeof AppCreated>> {
  const cfg: AppConfig = {
    type: body.type,
    isConfidential: body.isConfidential ?? (body.type === 'web' || body.type === 'm2m'),
    redirectUris: body.redirectUris ?? [],
    postLogoutRedirectUris: body.postLogoutRedirectUris ?? [],
    backchannelLogoutUri: body.backchannelLogoutUri ?? null,
    allowedGrantTypes: body.allowedGrantTypes,
    allowedScopes: body.allowedScopes,
    localDev: ctx.config.nodeEnv !== 'production',
    allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks,
  };
  return ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const errors = appConfigErrors(cfg, await scopeNames(trx, brand.id));
    if (errors.length) throw validationFailed(errors);
    await checkGatePolicyReference(ctx, trx, org.id, body.requiredGatePolicyId, 'requiredGatePolicyId');
    const secret = cfg.isConfidential ? newSecret() : null;
    const now = ctx.clock.now();
    const row = await q
      .insertApp(trx, {
        id: newId('app_'),
        org_id: org.id,
        brand_id: brand.id,
        client_id: randomAlphanumeric(CLIENT_ID_LENGTH),
        client_secret_hash: secret ? sha256(secret) : null,
        name: body.name,
        type: cfg.type,
        is_confidential: cfg.isConfidential,
        redirect_uris: cfg.redirectUris,
        post_logout_redirect_uris: cfg.postLogoutRedirectUris,
        backchannel_logout_uri: cfg.backchannelLogoutUri,
        allowed_grant_types: cfg.allowedGrantTypes,
        allowed_scopes: cfg.allowedScopes,
        enabled: true,
        description: body.description ?? null,
        required_gate_policy_id: body.requiredGatePolicyId ?? null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .catch(mapDbError);
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'app.created',
      resourceType: 'app',
      resourceId: row.id,
      metadata: { clientId: row.client_id, brand: brand.slug, name: row.name, type: row.type },
      events: [
        {
          type: 'oidcClient.created',
          data: {
            clientId: row.client_id,
            brand: brand.slug,
            name: row.name,
            type: row.type,
            isConfidential: row.is_confidential,
            redirectUris: row.redirect_uris,
            allowedGrantTypes: row.allowed_grant_types,
            allowedScopes: row.allowed_scopes,
            ...(row.required_gate_policy_id ? { requiredGatePolicyId: row.required_gate_policy_id } : {}),
          },
        },
      ],
    });
    const out: Static<typeof AppCreated> = toApp(row, brand.slug);
    if (secret) out.clientSecret = secret;
    return out;
  });
}

export async function listApps(
  ctx: AppContext,
  org: OrgRow,
  brandSlug: string,
  page: { limit: number; offset: number },
) {
  const brand = await requireBrand(ctx.db, org, brandSlug);
  const { rows, total } = await q.listApps(ctx.db, brand.id, page);
  return { items: rows.map((r) => toApp(r, brand.slug)), total };
}

export async function getApp(ctx: AppContext, org: OrgRow, brandSlug: string, clientId: string) {
  const brand = await requireBrand(ctx.db, org, brandSlug);
  const row = await q.findAppInBrand(ctx.db, brand.id, clientId);
  if (!row) throw notFound('app');
  return toApp(row, brand.slug);
}

/** The console app is provisioned and repaired by the service; changing it could lock everyone out. */
function refuseFirstParty(app: AppRow): void {
  if (app.first_party) throw unprocessable('this first-party app is managed by the service');
}

async function lockApp(trx: Executor, brand: BrandRow, clientId: string): Promise<AppRow> {
  const app = await q.findAppInBrand(trx, brand.id, clientId, true);
  if (!app) throw notFound('app');
  return app;
}

const DIFF_FIELDS = [
  'name',
  'description',
  'redirectUris',
  'postLogoutRedirectUris',
  'backchannelLogoutUri',
  'allowedGrantTypes',
  'allowedScopes',
  'enabled',
  'requiredGatePolicyId',
] as const;

export async function updateApp(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  clientId: string,
  body: Static<typeof AppPatchBody>,
): Promise<AppOut> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const app = await lockApp(trx, brand, clientId);
    refuseFirstParty(app);
    const before = toApp(app, brand.slug);
    const cfg: AppConfig = {
      type: app.type as AppType,
      isConfidential: app.is_confidential,
      redirectUris: body.redirectUris ?? app.redirect_uris,
      postLogoutRedirectUris: body.postLogoutRedirectUris ?? app.post_logout_redirect_uris,
      backchannelLogoutUri:
        body.backchannelLogoutUri === undefined ? app.backchannel_logout_uri : body.backchannelLogoutUri,
      allowedGrantTypes: body.allowedGrantTypes ?? app.allowed_grant_types,
      allowedScopes: body.allowedScopes ?? app.allowed_scopes,
      localDev: ctx.config.nodeEnv !== 'production',
      allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks,
    };
    const errors = appConfigErrors(cfg, await scopeNames(trx, brand.id));
    if (errors.length) throw validationFailed(errors);
    const wanted = {
      ...before,
      name: body.name ?? before.name,
      description: body.description === undefined ? before.description : body.description,
      redirectUris: cfg.redirectUris,
      postLogoutRedirectUris: cfg.postLogoutRedirectUris ?? [],
      backchannelLogoutUri: cfg.backchannelLogoutUri ?? null,
      allowedGrantTypes: cfg.allowedGrantTypes,
      allowedScopes: cfg.allowedScopes,
      enabled: body.enabled ?? before.enabled,
      requiredGatePolicyId:
        body.requiredGatePolicyId === undefined ? before.requiredGatePolicyId : body.requiredGatePolicyId,
    };
    const changes = diff(before as Record<string, unknown>, wanted as Record<string, unknown>, [
      ...DIFF_FIELDS,
    ]);
    const changed = Object.keys(changes.after);
    if (changed.length === 0) return { app: before, changed: false };
    if (changed.includes('requiredGatePolicyId'))
      await checkGatePolicyReference(ctx, trx, org.id, wanted.requiredGatePolicyId, 'requiredGatePolicyId');
    const patch: Updateable<AppsTable> = {
      name: wanted.name,
      description: wanted.description,
      redirect_uris: wanted.redirectUris,
      post_logout_redirect_uris: wanted.postLogoutRedirectUris,
      backchannel_logout_uri: wanted.backchannelLogoutUri,
      allowed_grant_types: wanted.allowedGrantTypes,
      allowed_scopes: wanted.allowedScopes,
      enabled: wanted.enabled,
      required_gate_policy_id: wanted.requiredGatePolicyId,
      updated_at: ctx.clock.now(),
    };
    const row = await q.updateApp(trx, app.id, patch);
    const disabled = before.enabled && !wanted.enabled;
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'app.updated',
      resourceType: 'app',
      resourceId: app.id,
      metadata: { clientId, brand: brand.slug, changed },
      events: [
        { type: 'oidcClient.updated', data: { clientId, before: changes.before, after: changes.after } },
        // The catalog's oidcClient.deleted fires "when an app is disabled or deleted".
        ...(disabled ? [{ type: 'oidcClient.deleted' as const, data: { clientId, brand: brand.slug } }] : []),
      ],
    });
    await notifyAppChanged(ctx, trx, [clientId]);
    return { app: toApp(row, brand.slug), changed: true };
  });
  if (result.changed) appChangeCommitted(ctx, [clientId]);
  return result.app;
}

/** 422 for public clients: they have no secret to rotate. The old secret fails from the commit on. */
export async function rotateSecret(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  clientId: string,
): Promise<{ clientSecret: string }> {
  const secret = await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const app = await lockApp(trx, brand, clientId);
    refuseFirstParty(app);
    if (!app.is_confidential) throw unprocessable('public clients have no secret to rotate');
    const fresh = newSecret();
    await q.updateApp(trx, app.id, { client_secret_hash: sha256(fresh), updated_at: ctx.clock.now() });
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'app.secret.rotated',
      resourceType: 'app',
      resourceId: app.id,
      metadata: { clientId, brand: brand.slug },
      events: [{ type: 'oidcClient.secret.rotated', data: { clientId } }],
    });
    await notifyAppChanged(ctx, trx, [clientId]);
    return fresh;
  });
  appChangeCommitted(ctx, [clientId]);
  return { clientSecret: secret };
}

/** Soft-disables: `enabled` false and `deleted_at` set; the app disappears from the API. */
export async function deleteApp(
  ctx: AppContext,
  org: OrgRow,
  actorUserId: string,
  brandSlug: string,
  clientId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const brand = await lockBrand(trx, org, brandSlug, 'share');
    const app = await lockApp(trx, brand, clientId);
    refuseFirstParty(app);
    await q.softDeleteApp(trx, app.id, ctx.clock.now());
    await recordMutation(trx, ctx.clock, {
      orgId: org.id,
      actorUserId,
      action: 'app.deleted',
      resourceType: 'app',
      resourceId: app.id,
      metadata: { clientId, brand: brand.slug },
      events: [{ type: 'oidcClient.deleted', data: { clientId, brand: brand.slug } }],
    });
    await notifyAppChanged(ctx, trx, [clientId]);
  });
  appChangeCommitted(ctx, [clientId]);
}
