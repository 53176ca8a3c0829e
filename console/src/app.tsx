import type { ComponentChildren } from 'preact';
import { LocationProvider, lazy, Route, Router, useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { beginSignIn, completeSignIn, isSignedIn, signedOutByUser, signOut } from './auth.js';
import { AccountDeleted } from './pages/account-deleted.js';
import { AppDetail, Apps, CreateApp } from './pages/apps.js';
import { BrandEdit, Brands, CreateBrand } from './pages/brands.js';
import { Connections } from './pages/connections.js';
import { AcceptInvitation } from './pages/invitations.js';
import { Members, Roles } from './pages/members.js';
import { CreateOrg, Home, OrgSettings } from './pages/orgs.js';
import { Scopes } from './pages/scopes.js';
import { OrgProvider, SessionProvider, useSession } from './session.js';

/** Where the console goes after the account is deleted: a page that needs no session. */
const ACCOUNT_DELETED = '/console/account-deleted';

// Token gates, webhooks and the audit log load when first opened (the initial bundle stays small).
const TokenGates = lazy(() => import('./pages/token-gates.js').then((m) => m.TokenGates));
const TokenGateDetail = lazy(() => import('./pages/token-gates.js').then((m) => m.TokenGateDetail));
const GatePolicies = lazy(() => import('./pages/gate-policies.js').then((m) => m.GatePolicies));
const GatePolicyDetail = lazy(() => import('./pages/gate-policies.js').then((m) => m.GatePolicyDetail));
const BulkCheck = lazy(() => import('./pages/bulk-check.js').then((m) => m.BulkCheck));
const Webhooks = lazy(() => import('./pages/webhooks.js').then((m) => m.Webhooks));
const WebhookDetail = lazy(() => import('./pages/webhooks.js').then((m) => m.WebhookDetail));
const AuditLog = lazy(() => import('./pages/audit-log.js').then((m) => m.AuditLog));
// So do the account's screens and the operator's views.
const Profile = lazy(() => import('./pages/account.js').then((m) => m.Profile));
const ConnectedApps = lazy(() => import('./pages/account.js').then((m) => m.ConnectedApps));
const Sessions = lazy(() => import('./pages/account-sessions.js').then((m) => m.Sessions));
const DeleteAccount = lazy(() => import('./pages/account.js').then((m) => m.DeleteAccount));
const SignInMethods = lazy(() => import('./pages/account-wallets.js').then((m) => m.SignInMethods));
const ApiKeys = lazy(() => import('./pages/account-keys.js').then((m) => m.ApiKeys));
const AllOrgs = lazy(() => import('./pages/operator.js').then((m) => m.AllOrgs));
const FindUsers = lazy(() => import('./pages/operator.js').then((m) => m.FindUsers));

type Boot =
  | { state: 'working'; message: string }
  | { state: 'signed-in' }
  | { state: 'signed-out'; message?: string };

/**
 * The first thing on every load: the callback redeems its code; any other route signs in silently
 * against the hosted session (unless the user signed out in this tab) and comes back to itself.
 */
function useBoot(): [Boot, (b: Boot) => void] {
  const [boot, setBoot] = useState<Boot>(
    isSignedIn() ? { state: 'signed-in' } : { state: 'working', message: 'Signing you in…' },
  );
  const { route } = useLocation();
  useEffect(() => {
    if (isSignedIn()) return;
    const url = new URL(window.location.href);
    if (url.pathname === ACCOUNT_DELETED) {
      setBoot({ state: 'signed-out' });
    } else if (url.pathname === '/console/callback') {
      completeSignIn(url)
        .then((r) => {
          if (r.signedIn) {
            route(r.returnTo, true);
            setBoot({ state: 'signed-in' });
          } else {
            window.history.replaceState(null, '', r.returnTo);
            setBoot({ state: 'signed-out', message: r.reason === 'error' ? r.message : undefined });
          }
        })
        .catch((e: Error) => setBoot({ state: 'signed-out', message: e.message }));
    } else if (signedOutByUser()) {
      setBoot({ state: 'signed-out', message: 'You signed out.' });
    } else {
      void beginSignIn({ silent: true }).catch((e: Error) =>
        setBoot({ state: 'signed-out', message: e.message }),
      );
    }
  }, []);
  return [boot, setBoot];
}

function SignedOut({ message }: { message?: string }) {
  return (
    <main class="container narrow">
      <h1>Gatehouse console</h1>
      <p>Manage your organizations, brands, apps and sign-in connections.</p>
      {message && <p role="status">{message}</p>}
      <button type="button" onClick={() => void beginSignIn({ fresh: signedOutByUser() })}>
        Sign in
      </button>
    </main>
  );
}

function OrgSwitcher() {
  const { orgs } = useSession();
  const { path, route } = useLocation();
  const current = /^\/console\/orgs\/([a-z0-9-]+)/.exec(path)?.[1];
  const active = current === 'new' ? '' : (current ?? '');
  return (
    <label class="switcher">
      <span class="visually-hidden">Organization</span>
      <select
        aria-label="Organization"
        value={active}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          route(v ? `/console/orgs/${v}` : '/console/');
        }}
      >
        <option value="">All organizations</option>
        {orgs.map((o) => (
          <option key={o.slug} value={o.slug}>
            {o.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function Shell({ children }: { children: ComponentChildren }) {
  const { me, system } = useSession();
  const { path } = useLocation();
  const who = me.username ?? me.userPublicKeys?.[0]?.address?.slice(0, 8) ?? me.id;
  const operator = system.has('admin.orgs.view')
    ? '/console/operator/orgs'
    : system.has('admin.users.view')
      ? '/console/operator/users'
      : null;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="container topbar">
        <nav aria-label="Console">
          <ul>
            <li>
              <a href="/console/" class="brand">
                <strong>Gatehouse</strong>
              </a>
            </li>
          </ul>
          <ul>
            <li>
              <OrgSwitcher />
            </li>
            {operator && (
              <li>
                <a href={operator} aria-current={path.startsWith('/console/operator') ? 'page' : undefined}>
                  Operator
                </a>
              </li>
            )}
            <li>
              <a
                href="/console/account"
                class="who"
                title={`Your account (${me.id})`}
                aria-current={path.startsWith('/console/account') ? 'page' : undefined}
              >
                <span class="visually-hidden">Account: </span>
                {who}
              </a>
            </li>
            <li>
              <button type="button" class="secondary outline" onClick={() => void signOut()}>
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" class="container" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

function OrgNav() {
  const { params } = useRoute();
  const { path } = useLocation();
  const base = `/console/orgs/${params.org}`;
  const links: [string, string][] = [
    [base, 'Settings'],
    [`${base}/members`, 'Members'],
    [`${base}/roles`, 'Roles'],
    [`${base}/brands`, 'Brands'],
    [`${base}/token-gates`, 'Token gates'],
    [`${base}/webhooks`, 'Webhooks'],
    [`${base}/audit-log`, 'Audit log'],
  ];
  return (
    <nav aria-label="Organization" class="tabs">
      <ul>
        {links.map(([href, label]) => {
          const current = href === base ? path === base : path.startsWith(href);
          return (
            <li key={href}>
              <a href={href} aria-current={current ? 'page' : undefined}>
                {label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

function InOrg({ page: Page }: { page: () => ComponentChildren }) {
  const { params } = useRoute();
  return (
    <OrgProvider slug={params.org}>
      <OrgNav />
      <Page />
    </OrgProvider>
  );
}

const orgPage = (Page: () => ComponentChildren) => () => <InOrg page={Page} />;

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is nothing at this address. <a href="/console/">Back to your organizations</a>.
      </p>
    </>
  );
}

function SignedIn() {
  return (
    <SessionProvider>
      {(session, failed) =>
        session ? (
          <Shell>
            <Router>
              <Route path="/console/" component={Home} />
              <Route path="/console/orgs/new" component={CreateOrg} />
              <Route path="/console/account" component={Profile} />
              <Route path="/console/account/sign-in" component={SignInMethods} />
              <Route path="/console/account/api-keys" component={ApiKeys} />
              <Route path="/console/account/apps" component={ConnectedApps} />
              <Route path="/console/account/sessions" component={Sessions} />
              <Route path="/console/account/delete" component={DeleteAccount} />
              <Route path="/console/operator/orgs" component={AllOrgs} />
              <Route path="/console/operator/users" component={FindUsers} />
              <Route path="/console/invitations/accept" component={AcceptInvitation} />
              <Route path="/console/orgs/:org" component={orgPage(OrgSettings)} />
              <Route path="/console/orgs/:org/members" component={orgPage(Members)} />
              <Route path="/console/orgs/:org/roles" component={orgPage(Roles)} />
              <Route path="/console/orgs/:org/brands" component={orgPage(Brands)} />
              <Route path="/console/orgs/:org/brands/new" component={orgPage(CreateBrand)} />
              <Route path="/console/orgs/:org/brands/:brand" component={orgPage(BrandEdit)} />
              <Route path="/console/orgs/:org/brands/:brand/apps" component={orgPage(Apps)} />
              <Route path="/console/orgs/:org/brands/:brand/apps/new" component={orgPage(CreateApp)} />
              <Route path="/console/orgs/:org/brands/:brand/apps/:clientId" component={orgPage(AppDetail)} />
              <Route path="/console/orgs/:org/brands/:brand/scopes" component={orgPage(Scopes)} />
              <Route path="/console/orgs/:org/brands/:brand/connections" component={orgPage(Connections)} />
              <Route path="/console/orgs/:org/token-gates" component={orgPage(TokenGates)} />
              <Route path="/console/orgs/:org/token-gates/policies" component={orgPage(GatePolicies)} />
              <Route
                path="/console/orgs/:org/token-gates/policies/:policyId"
                component={orgPage(GatePolicyDetail)}
              />
              <Route path="/console/orgs/:org/token-gates/bulk-check" component={orgPage(BulkCheck)} />
              <Route path="/console/orgs/:org/token-gates/:gateId" component={orgPage(TokenGateDetail)} />
              <Route path="/console/orgs/:org/webhooks" component={orgPage(Webhooks)} />
              <Route path="/console/orgs/:org/webhooks/:id" component={orgPage(WebhookDetail)} />
              <Route path="/console/orgs/:org/audit-log" component={orgPage(AuditLog)} />
              <Route default component={NotFound} />
            </Router>
          </Shell>
        ) : failed ? (
          <main class="container narrow">
            <p role="alert">{failed}</p>
          </main>
        ) : (
          <main class="container narrow">
            <p aria-busy="true" role="status">
              Loading your account…
            </p>
          </main>
        )
      }
    </SessionProvider>
  );
}

function Root() {
  const [boot] = useBoot();
  const { path } = useLocation();
  if (path === ACCOUNT_DELETED) return <AccountDeleted />;
  if (boot.state === 'signed-in') return <SignedIn />;
  if (boot.state === 'signed-out') return <SignedOut message={boot.message} />;
  return (
    <main class="container narrow">
      <p aria-busy="true" role="status">
        {boot.message}
      </p>
    </main>
  );
}

export function App() {
  return (
    <LocationProvider scope="/console">
      <Root />
    </LocationProvider>
  );
}
