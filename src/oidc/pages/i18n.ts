import { type Catalog, type MessageKey, en } from './i18n/en.js';

/**
 * Page strings by language. English is the fallback; a translation is one more catalog file in
 * `./i18n/` registered here.
 */
const CATALOGS: Record<string, Catalog> = { en };

export type Locale = string;
export type Translate = (key: MessageKey, vars?: Record<string, string>) => string;

/** Language tags to try, best first: `ui_locales` (space-separated) then `Accept-Language` (by q). */
export function preferredLanguages(uiLocales?: string | null, acceptLanguage?: string | null): string[] {
  const out: string[] = [];
  for (const tag of (uiLocales ?? '').split(/\s+/)) if (tag) out.push(tag);
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: tag.trim(), q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((x) => x.tag && x.tag !== '*' && Number.isFinite(x.q) && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const x of ranked) out.push(x.tag);
  return out;
}

/** The first wanted language with a catalog (exact tag, then its primary subtag), else English. */
export function pickLocale(wanted: string[], available: readonly string[] = Object.keys(CATALOGS)): Locale {
  const have = new Map(available.map((a) => [a.toLowerCase(), a]));
  for (const tag of wanted) {
    const lower = tag.toLowerCase().slice(0, 35);
    const hit = have.get(lower) ?? have.get(lower.split('-')[0]);
    if (hit) return hit;
  }
  return 'en';
}

/** The translator for a locale: `{name}` placeholders filled from `vars`. */
export function translator(locale: Locale): Translate {
  const catalog = CATALOGS[locale] ?? en;
  return (key, vars) =>
    (catalog[key] ?? en[key]).replace(/\{(\w+)\}/g, (m, name: string) => vars?.[name] ?? m);
}

/** The locale of a request: `ui_locales` (from the authorize request) first, then the browser's. */
export function requestLocale(
  req: { headers: Record<string, string | string[] | undefined> },
  uiLocales?: string | null,
): Locale {
  const accept = req.headers['accept-language'];
  return pickLocale(preferredLanguages(uiLocales, typeof accept === 'string' ? accept : undefined));
}

/** The sign-in page's line for a provider's `error` code, in the page's language; unknown codes none. */
export function providerNotice(t: Translate, code: string | undefined): string | undefined {
  const key = `providerError.${code}`;
  return code && Object.hasOwn(en, key) ? t(key as MessageKey) : undefined;
}
