import type { Config } from './config/index.js';
import {
  CONSOLE_BRAND_ID,
  CONSOLE_BRAND_SLUG,
  CONSOLE_CLIENT_ID,
  SYSTEM_ORG_ID,
  SYSTEM_ORG_SLUG,
} from './config/system.js';
import type { Executor } from './db/schema.js';
import type { Clock } from './lib/clock.js';
import { upsertAppRedirectUris } from './modules/apps/apps.queries.js';
import { insertBrandIfAbsent } from './modules/brands/brands.queries.js';
import { builtInRoleRows } from './modules/orgs/built-in-roles.js';
import { insertOrgIfAbsent, insertRoles } from './modules/orgs/orgs.queries.js';
import { WALLET_PROVIDER } from './providers/types.js';

// Declared below the modules and the engine, which recognise them; re-exported for the tests' helpers.
export { CONSOLE_BRAND_ID, CONSOLE_BRAND_SLUG, CONSOLE_CLIENT_ID, SYSTEM_ORG_ID, SYSTEM_ORG_SLUG };
export { builtInRoleRows };

/**
 * Ensures the system org, the `console` brand and the public `console` app (DESIGN.md §3). Every
 * insert is `on conflict do nothing` on fixed ids, so restarts and instances starting together are safe.
 * The console app's redirect URI follows BASE_URL, so it is reset on every start.
 */
export async function ensureConsole(db: Executor, config: Config, clock: Clock): Promise<void> {
  const now = clock.now();
  await db.transaction().execute(async (trx) => {
    const inserted = await insertOrgIfAbsent(trx, {
      id: SYSTEM_ORG_ID,
      name: 'System',
      slug: SYSTEM_ORG_SLUG,
      slug_claim: SYSTEM_ORG_SLUG,
      description: 'Operator organization that owns the console',
      icon_file_id: null,
      created_by: 'system',
      payment_product_id: null,
      payment_customer_id: null,
      tier: 'authority',
      is_system: true,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    });
    if (inserted) await insertRoles(trx, builtInRoleRows(SYSTEM_ORG_ID, now));
    await insertBrandIfAbsent(trx, {
      id: CONSOLE_BRAND_ID,
      org_id: SYSTEM_ORG_ID,
      slug: CONSOLE_BRAND_SLUG,
      name: 'Gatehouse Console',
      oauth_callback_id: 'console',
      logo_file_id: null,
      primary_color: null,
      support_email: null,
      privacy_policy_url: null,
      terms_url: null,
      provider_order: [WALLET_PROVIDER],
      created_at: now,
      updated_at: now,
      deleted_at: null,
    });
    const redirectUri = `${config.baseUrl}/console/callback`;
    await upsertAppRedirectUris(trx, {
      id: 'app_console',
      org_id: SYSTEM_ORG_ID,
      brand_id: CONSOLE_BRAND_ID,
      client_id: CONSOLE_CLIENT_ID,
      client_secret_hash: null,
      name: 'Gatehouse Console',
      type: 'spa',
      is_confidential: false,
      redirect_uris: [redirectUri],
      // The console's Sign out ends the hosted session at /oauth2/logout and comes back here.
      post_logout_redirect_uris: [`${config.baseUrl}/console/`],
      allowed_grant_types: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      allowed_scopes: ['openid', 'profile', 'email', 'offline_access'],
      enabled: true,
      first_party: true,
      description: 'The first-party console; its access tokens are accepted by the REST API',
      created_at: now,
      updated_at: now,
      deleted_at: null,
    });
  });
}
