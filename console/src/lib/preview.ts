import { previewColor } from './providers.js';

export interface PreviewValues {
  name: string;
  logoUrl?: string | null;
  color?: string | null;
  privacyPolicyUrl?: string | null;
  termsUrl?: string | null;
  supportEmail?: string | null;
  order: string[];
}

/**
 * The URL of the hosted sign-in page rendered with the form's unsaved values
 * (`GET /console/brand-preview`); empty values are left out.
 */
export function previewUrl(v: PreviewValues): string {
  const q = new URLSearchParams();
  const put = (k: string, value: string | null | undefined) => {
    const s = value?.trim();
    if (s) q.set(k, s);
  };
  put('name', v.name.slice(0, 80));
  put('primaryColor', previewColor(v.color));
  put('logoUrl', v.logoUrl);
  put('privacyPolicyUrl', v.privacyPolicyUrl);
  put('termsUrl', v.termsUrl);
  put('supportEmail', v.supportEmail);
  put('providerOrder', v.order.join(','));
  return `/console/brand-preview?${q}`;
}
