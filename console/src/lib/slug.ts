/** The org and brand slug rule of the interface: `[a-z0-9-]{3,30}`. */
export const SLUG_PATTERN = /^[a-z0-9-]{3,30}$/;

/** A slug suggested from a display name: lower case, dashes for runs of anything else, 30 chars. */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30)
    .replace(/-+$/, '');
}

/** Why a slug is refused, as the user types; `null` when the format is right. */
export function slugProblem(slug: string): string | null {
  if (slug.length === 0) return 'Enter a slug.';
  if (slug.length < 3) return 'At least 3 characters.';
  if (slug.length > 30) return 'At most 30 characters.';
  if (!SLUG_PATTERN.test(slug)) return 'Only lower-case letters, digits and dashes.';
  return null;
}

/** The scope name rule: `[a-z0-9:_-]{2,80}`. */
export function scopeNameProblem(name: string): string | null {
  if (name.length < 2) return 'At least 2 characters.';
  if (name.length > 80) return 'At most 80 characters.';
  if (!/^[a-z0-9:_-]+$/.test(name)) return 'Only lower-case letters, digits, colons, dashes and underscores.';
  return null;
}
