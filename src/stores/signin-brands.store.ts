import type { Executor } from '../db/schema.js';
import type { SigninBrandStore } from '../oidc/signin/stores.js';

/** Turns file ids into their public URLs (the files module owns the table; given in wiring). */
export type FileUrls = (db: Executor, ids: string[]) => Promise<Map<string, string>>;

async function logoUrl(db: Executor, fileUrls: FileUrls, fileId: string | null): Promise<string | null> {
  if (!fileId) return null;
  return (await fileUrls(db, [fileId])).get(fileId) ?? null;
}

/** Brands as the sign-in pages and the interaction view show them (read only; live brands). */
export function signinBrandStore(db: Executor, fileUrls: FileUrls): SigninBrandStore {
  const live = () => db.selectFrom('brands').where('deleted_at', 'is', null);
  return {
    async presentation(brandId) {
      const row = await live()
        .select([
          'id',
          'org_id as orgId',
          'slug',
          'name',
          'logo_file_id as logoFileId',
          'primary_color as primaryColor',
          'privacy_policy_url as privacyPolicyUrl',
          'terms_url as termsUrl',
          'provider_order as providerOrder',
        ])
        .where('id', '=', brandId)
        .executeTakeFirst();
      if (!row) return null;
      const { logoFileId, ...brand } = row;
      return { ...brand, logoUrl: await logoUrl(db, fileUrls, logoFileId) };
    },
    async page(brandId) {
      const row = await live()
        .select(['name', 'logo_file_id', 'primary_color', 'support_email', 'privacy_policy_url', 'terms_url'])
        .where('id', '=', brandId)
        .executeTakeFirst();
      if (!row) return null;
      return {
        name: row.name,
        logoUrl: await logoUrl(db, fileUrls, row.logo_file_id),
        primaryColor: row.primary_color,
        supportEmail: row.support_email,
        privacyPolicyUrl: row.privacy_policy_url,
        termsUrl: row.terms_url,
      };
    },
    async callbackId(brandId) {
      const row = await live()
        .select(['id', 'oauth_callback_id as oauthCallbackId'])
        .where('id', '=', brandId)
        .executeTakeFirst();
      return row ?? null;
    },
    async scopeDescriptions(brandId) {
      const rows = await db
        .selectFrom('brand_scopes')
        .select(['name', 'description'])
        .where('brand_id', '=', brandId)
        .execute();
      return new Map(rows.map((x) => [x.name, x.description]));
    },
  };
}
