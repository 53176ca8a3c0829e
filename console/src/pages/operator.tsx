import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Empty, Field, FormProblem, LoadError, Loading } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { when } from './account.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** The operator's screens, for holders of the system permissions they need. */
export function OperatorNav() {
  const { system } = useSession();
  const { path } = useLocation();
  const links: [string, string, string][] = [
    ['/console/operator/orgs', 'All organizations', 'admin.orgs.view'],
    ['/console/operator/users', 'Find users', 'admin.users.view'],
  ];
  return (
    <nav aria-label="Operator" class="tabs">
      <ul>
        {links
          .filter(([, , p]) => system.has(p))
          .map(([href, label]) => (
            <li key={href}>
              <a href={href} aria-current={path === href ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
      </ul>
    </nav>
  );
}

function Needs({ permission }: { permission: string }) {
  return (
    <>
      <h1>Not available</h1>
      <p>This view needs the system permission {permission}.</p>
    </>
  );
}

const PAGE = 50;

/** Every org of the installation (the admin mirror's list), paginated with the offset in the URL. */
export function AllOrgs() {
  const { system } = useSession();
  const { query, route } = useLocation();
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const allowed = system.has('admin.orgs.view');
  const orgs = useLoad(
    () =>
      allowed
        ? unwrap(api.GET('/admin/identity/organizations', { params: { query: { limit: PAGE, offset } } }))
        : Promise.resolve(null),
    [offset, allowed],
  );
  if (!allowed) return <Needs permission="admin.orgs.view" />;
  const total = orgs.data?.total ?? 0;
  return (
    <>
      <OperatorNav />
      <hgroup>
        <h1>All organizations</h1>
        <p>Every organization on this installation, as the admin API mirrors them.</p>
      </hgroup>
      {orgs.loading && !orgs.data && <Loading what="organizations" />}
      {orgs.error && <LoadError problem={orgs.error} />}
      {orgs.data &&
        (orgs.data.items.length === 0 ? (
          <Empty>No organizations.</Empty>
        ) : (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Slug</th>
                    <th scope="col">Tier</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {orgs.data.items.map((o: Json) => (
                    <tr key={o.id}>
                      <th scope="row">{o.name}</th>
                      <td>
                        <code>{o.slug}</code>
                      </td>
                      <td>{o.tier ?? '—'}</td>
                      <td>{when(o.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav aria-label="Pages" class="row">
              <span>
                {offset + 1}–{Math.min(offset + PAGE, total)} of {total}
              </span>
              <button
                type="button"
                class="secondary outline"
                disabled={offset === 0}
                onClick={() => route(`/console/operator/orgs?offset=${Math.max(0, offset - PAGE)}`)}
              >
                Previous
              </button>
              <button
                type="button"
                class="secondary outline"
                disabled={offset + PAGE >= total}
                onClick={() => route(`/console/operator/orgs?offset=${offset + PAGE}`)}
              >
                Next
              </button>
            </nav>
          </>
        ))}
    </>
  );
}

function UserCard({ user }: { user: Json }) {
  const name = [user.firstName, user.lastName].filter(Boolean).join(' ');
  return (
    <article aria-label={`User ${user.username ?? user.id}`}>
      <h3>{user.username ?? user.id}</h3>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{user.id}</code>
        </dd>
        {name && (
          <>
            <dt>Name</dt>
            <dd>{name}</dd>
          </>
        )}
        <dt>Last seen</dt>
        <dd>{when(user.lastSeen)}</dd>
        <dt>Wallets</dt>
        <dd>
          {user.userPublicKeys?.length
            ? user.userPublicKeys.map((k: Json) => (
                <div key={k.id}>
                  <code>{k.address}</code>
                  {k.isPrimary ? ' (primary)' : ''}
                </div>
              ))
            : 'none'}
        </dd>
      </dl>
    </article>
  );
}

/** Look a user up by id, username or wallet; or several wallets at once. */
export function FindUsers() {
  const { system } = useSession();
  const one = useAction();
  const many = useAction();
  const [identifier, setIdentifier] = useState('');
  const [addresses, setAddresses] = useState('');
  const [found, setFound] = useState<{ for: string; user: Json | null } | null>(null);
  const [results, setResults] = useState<Json[] | null>(null);
  if (!system.has('admin.users.view')) return <Needs permission="admin.users.view" />;
  return (
    <>
      <OperatorNav />
      <h1>Find users</h1>
      <section aria-labelledby="find-one-h">
        <h2 id="find-one-h">By id, username or wallet</h2>
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            const q = identifier.trim();
            const r = await one.run(async () => ({
              user: await unwrap(api.POST('/users/find-by-identifier', { body: { identifier: q } })),
            }));
            setFound(r ? { for: q, user: r.user } : null);
          }}
        >
          <Field
            label="User id, username or wallet address"
            name="identifier"
            required
            maxLength={200}
            value={identifier}
            problem={one.problem}
            onInput={(e) => setIdentifier((e.target as HTMLInputElement).value)}
          />
          <button type="submit" aria-busy={one.busy || undefined} disabled={!identifier.trim()}>
            Find user
          </button>
        </form>
        <FormProblem problem={one.problem} />
        {found &&
          (found.user ? (
            <UserCard user={found.user} />
          ) : (
            <p role="status">No user has the id, username or wallet {found.for}.</p>
          ))}
      </section>
      <section aria-labelledby="find-many-h">
        <h2 id="find-many-h">By wallets</h2>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const list = addresses.split(/[\s,]+/).filter(Boolean);
            const r = await many.run(() =>
              unwrap(api.POST('/users/find-by-wallets', { body: { addresses: list } })),
            );
            setResults(r ? r.results : null);
          }}
        >
          <Field
            label="Wallet addresses"
            name="addresses"
            multiline
            rows={3}
            required
            value={addresses}
            hint="One per line, at most 100."
            problem={many.problem}
            onInput={(e) => setAddresses((e.target as HTMLTextAreaElement).value)}
          />
          <FormProblem problem={many.problem} />
          <button type="submit" aria-busy={many.busy || undefined} disabled={!addresses.trim()}>
            Find wallets
          </button>
        </form>
        {results && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Wallet</th>
                  <th scope="col">User</th>
                </tr>
              </thead>
              <tbody>
                {results.map((r) => (
                  <tr key={r.address}>
                    <th scope="row">
                      <code>{r.address}</code>
                    </th>
                    <td>{r.user ? `${r.user.username ?? ''} (${r.user.id})` : 'no user'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
