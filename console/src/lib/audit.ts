/** The audit log's filters, as the API names them; the console keeps them in the page's URL. */
export const AUDIT_FILTERS = [
  'action',
  'actorUserId',
  'resourceType',
  'resourceId',
  'since',
  'until',
] as const;
export type AuditFilterName = (typeof AUDIT_FILTERS)[number];
export type AuditFilters = Partial<Record<AuditFilterName, string>>;

export const PAGE_SIZES = [25, 50, 100, 200] as const;

export interface AuditView {
  filters: AuditFilters;
  limit: number;
  offset: number;
}

/** The view a URL query describes; unknown or malformed values fall back to the defaults. */
export function readAuditQuery(query: Record<string, string | undefined>): AuditView {
  const filters: AuditFilters = {};
  for (const k of AUDIT_FILTERS) {
    const v = query[k]?.trim();
    if (v) filters[k] = v;
  }
  const limit = Number(query.limit);
  const offset = Number(query.offset);
  return {
    filters,
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : 50,
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The URL query of a view (defaults left out, so a plain log has a plain address). */
export function auditQueryString(v: AuditView): string {
  const p = new URLSearchParams();
  for (const k of AUDIT_FILTERS) if (v.filters[k]) p.set(k, v.filters[k] as string);
  if (v.limit !== 50) p.set('limit', String(v.limit));
  if (v.offset > 0) p.set('offset', String(v.offset));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** `<input type="datetime-local">` value (local time) → ISO 8601 in UTC, or undefined when empty/invalid. */
export function localToIso(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** ISO 8601 → the `datetime-local` value showing the same instant in local time. */
export function isoToLocal(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A page's place in the whole: "51–100 of 230". */
export function pageLabel(offset: number, count: number, total: number): string {
  if (count === 0) return `0 of ${total}`;
  return `${offset + 1}–${offset + count} of ${total}`;
}

interface UserLike {
  firstName?: string;
  lastName?: string;
  username?: string;
  userPublicKeys?: { address: string; isPrimary?: boolean }[];
}

/** How a person is named on screen: their name, else username, else their (primary) wallet, else id. */
export function displayName(user: UserLike | undefined, id: string): string {
  const full = [user?.firstName, user?.lastName].filter(Boolean).join(' ');
  if (full) return full;
  if (user?.username) return user.username;
  const keys = user?.userPublicKeys ?? [];
  const wallet = (keys.find((k) => k.isPrimary) ?? keys[0])?.address;
  if (wallet) return `wallet ${wallet.slice(0, 4)}…${wallet.slice(-4)}`;
  return id;
}
