import type { Executor } from '../db/schema.js';
import { brandCallbackId, brandPageFields, brandPresentation } from '../modules/brands/brands.queries.js';
import { scopeDescriptions } from '../modules/scopes/scopes.queries.js';
import type { SigninBrandStore } from '../oidc/signin/stores.js';

/** Turns file ids into their public URLs (the files module owns the table; given in wiring). */
export type FileUrls = (db: Executor, ids: string[]) => Promise<Map<string, string>>;

async function logoUrl(db: Executor, fileUrls: FileUrls, fileId: string | null): Promise<string | null> {
  if (!fileId) return null;
  return (await fileUrls(db, [fileId])).get(fileId) ?? null;
}

/** Brands as the sign-in pages and the interaction view show them, on the brands module's queries. */
export function signinBrandStore(db: Executor, fileUrls: FileUrls): SigninBrandStore {
  return {
    async presentation(brandId) {
      const row = await brandPresentation(db, brandId);
      if (!row) return null;
      const { logoFileId, ...brand } = row;
      return { ...brand, logoUrl: await logoUrl(db, fileUrls, logoFileId) };
    },
    async page(brandId) {
      const row = await brandPageFields(db, brandId);
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
    callbackId: (brandId) => brandCallbackId(db, brandId),
    scopeDescriptions: (brandId) => scopeDescriptions(db, brandId),
  };
}
