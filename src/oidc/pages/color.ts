/**
 * Colour arithmetic for brand themes (WCAG 2.2 relative luminance and contrast ratio), so a page
 * stays readable whatever `primaryColor` a brand picks: text on the brand colour is black or
 * white, whichever contrasts more (never below 4.5:1), and the brand colour used as text or a
 * focus ring is darkened (light theme) or lightened (dark theme) until it reaches 4.5:1.
 */

type Rgb = [number, number, number];

/** `#rgb` / `#rrggbb` → [r, g, b] in 0–255; callers pass colours `safeColor` accepted. */
export function parseHex(hex: string): Rgb {
  let h = hex.replace(/^#/, '');
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  const n = Number.parseInt(h, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export function toHex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG 2.2 relative luminance of an sRGB colour. */
export function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two colours, 1–21. */
export function contrast(a: Rgb, b: Rgb): number {
  const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (l1 + 0.05) / (l2 + 0.05);
}

const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];

/** Text colour for a surface of `hex`: white or black, whichever contrasts more (≥ 4.58:1). */
export function textOn(hex: string): string {
  const c = parseHex(hex);
  return contrast(c, WHITE) >= contrast(c, BLACK) ? '#ffffff' : '#000000';
}

/**
 * The brand colour nudged towards black or white (whichever contrasts with `background`) until it
 * reaches `min` contrast with `background`: for links, outlined buttons and focus rings.
 */
export function inkOn(hex: string, background: string, min = 4.5): string {
  const bg = parseHex(background);
  const start = parseHex(hex);
  const target = contrast(bg, WHITE) > contrast(bg, BLACK) ? WHITE : BLACK;
  for (let step = 0; step <= 20; step++) {
    const t = step / 20;
    const mixed = start.map((v, i) => v + (target[i] - v) * t) as Rgb;
    const rounded = mixed.map((v) => Math.round(v)) as Rgb;
    if (contrast(rounded, bg) >= min) return toHex(rounded);
  }
  return toHex(target);
}
