import createDOMPurify, { type DOMPurify } from 'dompurify';

/**
 * SVG uploads pass DOMPurify's SVG allowlist (maintained against the browsers' parsers, unlike a
 * hand-written filter: an entity-encoded `jav&#x61;script:` or an `<animate>` that rewrites `href`
 * survived the regular expressions this replaces) on a jsdom window, plus one rule of ours: an SVG
 * may only point inside itself. Every `href`/`xlink:href` and every CSS `url(...)` must be a
 * `#fragment`, so no script URL, no `data:` document and no external resource (a tracking pixel,
 * an external `<use>`, an `@import`) survives. Files are also served with a CSP forbidding scripts
 * (files.routes.ts); this does not rely on it, since a CDN in front may drop the header.
 */

const URL_REF = /url\s*\(\s*(['"]?)\s*([^'")\s]*)/gi;
const HREF_ATTRS = new Set(['href', 'xlink:href']);

/** CSS functions that load a resource without `url(` (`image-set("https://…" 1x)` and kin). */
const RESOURCE_FUNCTIONS = /(?:-webkit-)?image-set\s*\(|\bimage\s*\(|cross-fade\s*\(|\bsrc\s*\(/i;
/** A quoted string that looks like a URL (a scheme or a network path): nothing local needs one. */
const QUOTED_URL = /(['"])[^'"]*(?::|\/\/)[^'"]*\1/;

/** True when every `url(...)` in a CSS value or presentation attribute points at a fragment. */
function cssUrlsAreLocal(value: string): boolean {
  // CSS escapes (`u\72l(`) and comments could hide a url( from the check: refuse them outright.
  if (value.includes('\\') || value.includes('/*') || /@import|expression\s*\(/i.test(value)) return false;
  if (RESOURCE_FUNCTIONS.test(value) || QUOTED_URL.test(value)) return false;
  for (const m of value.matchAll(URL_REF)) if (!(m[2] ?? '').startsWith('#')) return false;
  return true;
}

/**
 * jsdom is loaded at the first SVG upload, not at start: it is ~100 MB of a server's memory and most
 * of a second of its start (and of every test process's), and only SVG images need it.
 */
let purifier: Promise<DOMPurify> | undefined;

function instance(): Promise<DOMPurify> {
  purifier ??= (async () => {
    const { JSDOM } = await import('jsdom');
    const window = new JSDOM('').window;
    const p = createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]);
    p.addHook('uponSanitizeAttribute', (_node, data) => {
      const value = data.attrValue.trim();
      if (HREF_ATTRS.has(data.attrName) && !value.startsWith('#')) data.keepAttr = false;
      if ((data.attrName === 'style' || /url\s*\(/i.test(value)) && !cssUrlsAreLocal(value))
        data.keepAttr = false;
    });
    p.addHook('uponSanitizeElement', (node, data) => {
      if (data.tagName === 'style' && !cssUrlsAreLocal(node.textContent ?? '')) node.textContent = '';
    });
    return p;
  })().catch((err: unknown) => {
    purifier = undefined; // not kept: the next upload tries again
    throw err;
  });
  return purifier;
}

/**
 * The sanitised SVG, or null when nothing of an `<svg>` image is left. Only the first root `<svg>`
 * element is kept (a DOCTYPE, its entities and any text around the image are dropped); the HTML
 * serialiser's one non-XML entity is rewritten so the result still parses as XML.
 */
export async function sanitizeSvg(svg: string): Promise<string | null> {
  const purify = await instance();
  const fragment = purify.sanitize(svg, {
    USE_PROFILES: { svg: true, svgFilters: true },
    ADD_TAGS: ['use'],
    RETURN_DOM_FRAGMENT: true,
  });
  const root = fragment.querySelector('svg');
  if (!root) return null;
  // Served as image/svg+xml, the document is XML: without its namespace nothing would render.
  if (!root.hasAttribute('xmlns')) root.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  return root.outerHTML.replace(/&nbsp;/g, '&#160;');
}
