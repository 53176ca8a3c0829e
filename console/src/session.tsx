import { createContext, type ComponentChildren } from 'preact';
import { useContext, useMemo, useState } from 'preact/hooks';
import { api, unwrap } from './api.js';
import { useLoad } from './hooks.js';
import { permissionsOf, type RoleLike } from './lib/permissions.js';
import { ApiProblem, missingReason } from './lib/problems.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

export interface Session {
  me: Json;
  orgs: Json[];
  reloadOrgs: () => Promise<void>;
  reloadMe: () => Promise<void>;
  /** The system permissions the user holds (`admin.*`): the operator's views show for these only. */
  system: Set<string>;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('no session');
  return s;
}

/** The signed-in user and the orgs they belong to, loaded once after sign-in. */
export function SessionProvider({
  children,
}: {
  children: (s: Session | null, failed?: string) => ComponentChildren;
}) {
  const me = useLoad(() => unwrap(api.GET('/users/me', {})), []);
  const orgs = useLoad(
    () => unwrap(api.GET('/identity/organizations', { params: { query: { limit: 100, offset: 0 } } })),
    [],
  );
  const system = useLoad(
    () =>
      unwrap(api.GET('/users/me/system-permissions', {})).then(
        (r) => new Set<string>(r.permissions),
        () => new Set<string>(),
      ),
    [],
  );
  const value = useMemo<Session | null>(
    () =>
      me.data && orgs.data && system.data
        ? {
            me: me.data,
            orgs: orgs.data.items,
            reloadOrgs: orgs.reload,
            reloadMe: me.reload,
            system: system.data,
          }
        : null,
    [me.data, orgs.data, orgs.reload, me.reload, system.data],
  );
  const failed = me.error?.message ?? orgs.error?.message;
  return <SessionContext.Provider value={value}>{children(value, failed)}</SessionContext.Provider>;
}

export interface OrgState {
  slug: string;
  org: Json;
  roles: RoleLike[];
  members: Json[] | null;
  membersProblem?: ApiProblem;
  perms: Set<string> | null;
  /** Why the user cannot do what `permission` allows, or null when they can (or it is unknown). */
  deny: (permission: string) => string | null;
  reload: () => Promise<void>;
}

const OrgContext = createContext<OrgState | null>(null);

export function useOrg(): OrgState {
  const o = useContext(OrgContext);
  if (!o) throw new Error('no org');
  return o;
}

/**
 * The org on screen with the user's permissions in it: the union of the permissions of the roles
 * the member list gives them. When the list cannot be read the console lets the API decide (its
 * 403 `details.missing` is then shown where the action failed).
 */
export function loadOrg(slug: string, myId: string) {
  return async () => {
    const path = { orgSlug: slug };
    const [org, roles, members] = await Promise.all([
      unwrap(api.GET('/identity/organizations/{orgSlug}', { params: { path } })),
      unwrap(api.GET('/identity/organizations/{orgSlug}/roles', { params: { path } })).catch(() => ({
        items: [],
      })),
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/members', {
          params: { path, query: { limit: 200, offset: 0 } },
        }),
      ).catch((e: ApiProblem) => e),
    ]);
    const list = members instanceof ApiProblem ? null : members.items;
    const mine = list?.find((m: Json) => m.userId === myId);
    const perms = mine
      ? permissionsOf(
          mine.roles.map((r: Json) => r.id),
          roles.items,
        )
      : null;
    return {
      org,
      roles: roles.items as RoleLike[],
      members: list,
      membersProblem: members instanceof ApiProblem ? members : undefined,
      perms,
    };
  };
}

type OrgData = Awaited<ReturnType<ReturnType<typeof loadOrg>>>;

/** Moving between an org's screens reuses what was loaded a moment ago (the org read limit is 60/min). */
const FRESH_MS = 30_000;
const orgCache = new Map<string, { at: number; data: Promise<OrgData> }>();

function cachedOrg(slug: string, myId: string, force: boolean): Promise<OrgData> {
  const key = `${myId}/${slug}`;
  const hit = orgCache.get(key);
  if (!force && hit && Date.now() - hit.at < FRESH_MS) return hit.data;
  const data = loadOrg(slug, myId)();
  orgCache.set(key, { at: Date.now(), data });
  data.catch(() => orgCache.delete(key));
  return data;
}

export function OrgProvider({ slug, children }: { slug: string; children: ComponentChildren }) {
  const { me } = useSession();
  const [force, setForce] = useState(0);
  const loaded = useLoad(() => cachedOrg(slug, me.id, force > 0), [slug, me.id, force]);
  const value = useMemo<OrgState | null>(() => {
    if (!loaded.data) return null;
    const perms = loaded.data.perms;
    return {
      slug,
      ...loaded.data,
      deny: (p: string) => (perms && !perms.has(p) ? missingReason([p]) : null),
      reload: async () => setForce((n) => n + 1),
    };
  }, [loaded.data, slug]);
  if (loaded.error && !loaded.data)
    return (
      <p role="alert" class="form-error">
        {loaded.error.status === 404
          ? 'This organization does not exist or you are not a member.'
          : loaded.error.message}
      </p>
    );
  if (!value)
    return (
      <p aria-busy="true" role="status">
        Loading the organization…
      </p>
    );
  return <OrgContext.Provider value={value}>{children}</OrgContext.Provider>;
}
