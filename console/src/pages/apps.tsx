import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import {
  Confirm,
  CopyButton,
  Empty,
  Field,
  FormProblem,
  GuardedButton,
  LoadError,
  Loading,
} from '../components/ui.js';
import { PolicyPicker } from '../components/policy-picker.js';
import { useAction, useLoad } from '../hooks.js';
import {
  APP_TYPE_DEFAULTS,
  type AppType,
  GRANT_LABELS,
  type GrantType,
  openidClientSnippet,
  parseUriList,
} from '../lib/app-types.js';
import type { ApiProblem } from '../lib/problems.js';
import { useOrg } from '../session.js';
import { BrandNav } from './brands.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

const UNIVERSAL_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'wallet', 'gates'];

/** A secret from a create response, handed to the detail page once and never kept longer. */
let freshSecret: { clientId: string; secret: string } | null = null;

function useBrandPath() {
  const o = useOrg();
  const { params } = useRoute();
  return { o, params, path: { orgSlug: o.slug, brandSlug: params.brand as string } };
}

export function Apps() {
  const { o, params, path } = useBrandPath();
  const apps = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps', {
          params: { path, query: { limit: 100, offset: 0 } },
        }),
      ),
    [path.orgSlug, path.brandSlug],
  );
  const deny = o.deny('org.apps.edit');
  const base = `/console/orgs/${o.slug}/brands/${params.brand}/apps`;
  return (
    <>
      <BrandNav brand={params.brand} />
      <h1>Apps</h1>
      {apps.loading && !apps.data && <Loading what="apps" />}
      {apps.error && <LoadError problem={apps.error} />}
      {apps.data &&
        (apps.data.items.length === 0 ? (
          <Empty>No apps yet. An app is an OAuth client that signs users in with this brand.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Client id</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {apps.data.items.map((a: Json) => (
                  <tr key={a.clientId}>
                    <td>
                      <a href={`${base}/${a.clientId}`}>{a.name}</a>
                    </td>
                    <td>{APP_TYPE_DEFAULTS[a.type as AppType]?.label ?? a.type}</td>
                    <td>
                      <code>{a.clientId}</code>
                    </td>
                    <td>{a.enabled ? 'Enabled' : 'Disabled'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <p>
        {deny ? (
          <GuardedButton type="button" denied={deny}>
            Create app
          </GuardedButton>
        ) : (
          <a href={`${base}/new`} class="button-link">
            Create app
          </a>
        )}
      </p>
    </>
  );
}

function useBrandScopes(path: { orgSlug: string; brandSlug: string }) {
  return useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/scopes', { params: { path } }),
      ).catch(() => ({
        items: [],
      })),
    [path.orgSlug, path.brandSlug],
  );
}

interface AppSettings {
  name: string;
  description: string;
  redirectUris: string;
  grants: GrantType[];
  scopes: string[];
  /** A gate policy id (gpol_…) a linked wallet must pass to sign in; empty for none. */
  requiredGatePolicyId: string;
}

/** Redirect URIs, grants and scopes: the part of an app shared by the create and edit forms. */
function AppSettingsFields(props: {
  v: AppSettings;
  set: (v: AppSettings) => void;
  brandScopes: string[];
  needsRedirects: boolean;
  problem?: ApiProblem;
}) {
  const { v, set } = props;
  const toggle = <T,>(list: T[], item: T) =>
    list.includes(item) ? list.filter((x) => x !== item) : [...list, item];
  return (
    <>
      <Field
        label="Name"
        name="name"
        required
        maxLength={80}
        value={v.name}
        problem={props.problem}
        onInput={(e) => set({ ...v, name: (e.target as HTMLInputElement).value })}
      />
      <Field
        label="Description (optional)"
        name="description"
        maxLength={500}
        value={v.description}
        problem={props.problem}
        onInput={(e) => set({ ...v, description: (e.target as HTMLInputElement).value })}
      />
      {(props.needsRedirects || v.redirectUris) && (
        <Field
          label="Redirect URIs"
          name="redirectUris"
          multiline
          rows={3}
          value={v.redirectUris}
          hint="One per line; HTTPS, exact match."
          problem={props.problem}
          onInput={(e) => set({ ...v, redirectUris: (e.target as HTMLInputElement).value })}
        />
      )}
      <fieldset>
        <legend>Grant types</legend>
        {(Object.entries(GRANT_LABELS) as [GrantType, string][]).map(([g, label]) => (
          <label key={g}>
            <input
              type="checkbox"
              name="allowedGrantTypes"
              checked={v.grants.includes(g)}
              onChange={() => set({ ...v, grants: toggle(v.grants, g) })}
            />
            {label}
          </label>
        ))}
        {props.problem?.fields.allowedGrantTypes && (
          <small class="field-error">{props.problem.fields.allowedGrantTypes}</small>
        )}
      </fieldset>
      <fieldset>
        <legend>Allowed scopes</legend>
        {[...UNIVERSAL_SCOPES, ...props.brandScopes].map((s) => (
          <label key={s}>
            <input
              type="checkbox"
              name="allowedScopes"
              checked={v.scopes.includes(s)}
              onChange={() => set({ ...v, scopes: toggle(v.scopes, s) })}
            />
            <code>{s}</code>
          </label>
        ))}
        {props.problem?.fields.allowedScopes && (
          <small class="field-error">{props.problem.fields.allowedScopes}</small>
        )}
      </fieldset>
      <PolicyPicker
        label="Required gate policy (optional)"
        name="requiredGatePolicyId"
        none="None: any user may sign in"
        value={v.requiredGatePolicyId}
        hint="Only users with a linked wallet that passes this gate policy can sign in."
        problem={props.problem}
        onChange={(id) => set({ ...v, requiredGatePolicyId: id })}
      />
    </>
  );
}

export function CreateApp() {
  const { o, params, path } = useBrandPath();
  const { route } = useLocation();
  const scopes = useBrandScopes(path);
  const action = useAction();
  const [type, setType] = useState<AppType>('web');
  const d = APP_TYPE_DEFAULTS[type];
  const [v, setV] = useState<AppSettings>({
    name: '',
    description: '',
    redirectUris: '',
    grants: d.grants,
    scopes: d.scopes,
    requiredGatePolicyId: '',
  });
  const pick = (t: AppType) => {
    setType(t);
    setV({ ...v, grants: APP_TYPE_DEFAULTS[t].grants, scopes: APP_TYPE_DEFAULTS[t].scopes });
  };
  return (
    <>
      <BrandNav brand={params.brand} />
      <h1>Create an app</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const app = await action.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps', {
                params: { path },
                body: {
                  name: v.name,
                  type,
                  isConfidential: d.isConfidential,
                  redirectUris: parseUriList(v.redirectUris),
                  allowedGrantTypes: v.grants,
                  allowedScopes: v.scopes,
                  ...(v.description ? { description: v.description } : {}),
                  ...(v.requiredGatePolicyId ? { requiredGatePolicyId: v.requiredGatePolicyId } : {}),
                },
              }),
            ),
          );
          if (app) {
            if (app.clientSecret) freshSecret = { clientId: app.clientId, secret: app.clientSecret };
            route(`/console/orgs/${o.slug}/brands/${params.brand}/apps/${app.clientId}`);
          }
        }}
      >
        <fieldset disabled={Boolean(o.deny('org.apps.edit'))}>
          <fieldset>
            <legend>Type</legend>
            {(Object.keys(APP_TYPE_DEFAULTS) as AppType[]).map((t) => (
              <label key={t}>
                <input type="radio" name="type" value={t} checked={type === t} onChange={() => pick(t)} />
                {APP_TYPE_DEFAULTS[t].label} <small>— {APP_TYPE_DEFAULTS[t].hint}</small>
              </label>
            ))}
          </fieldset>
          <AppSettingsFields
            v={v}
            set={setV}
            brandScopes={(scopes.data?.items ?? []).map((s: Json) => s.name)}
            needsRedirects={d.needsRedirectUris}
            problem={action.problem}
          />
        </fieldset>
        <FormProblem problem={action.problem} />
        <GuardedButton type="submit" denied={o.deny('org.apps.edit')} aria-busy={action.busy || undefined}>
          Create app
        </GuardedButton>
      </form>
    </>
  );
}

/** The secret, once: a copy button, a warning, and nothing kept after the user dismisses it. */
function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <article aria-labelledby="secret-h" class="secret-box">
      <h2 id="secret-h">Client secret</h2>
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> Gatehouse keeps only a hash; if you
        lose it, rotate the secret.
      </p>
      <p>
        <code class="secret" data-testid="client-secret">
          {secret}
        </code>
      </p>
      <div class="row">
        <CopyButton text={secret} label="Copy secret" />
        <button type="button" class="secondary" onClick={onDone}>
          I have saved the secret
        </button>
      </div>
    </article>
  );
}

export function AppDetail() {
  const { o, params, path: brandPath } = useBrandPath();
  const { route } = useLocation();
  const path = { ...brandPath, clientId: params.clientId as string };
  const app = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}', { params: { path } }),
      ),
    [path.orgSlug, path.brandSlug, path.clientId],
  );
  const scopes = useBrandScopes(brandPath);
  const [secret, setSecret] = useState<string | null>(() => {
    const s = freshSecret?.clientId === params.clientId ? freshSecret.secret : null;
    freshSecret = null;
    return s;
  });
  const save = useAction();
  const rotate = useAction();
  const toggle = useAction();
  const del = useAction();
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [edit, setEdit] = useState<AppSettings | null>(null);
  const [saved, setSaved] = useState(false);
  const deny = o.deny('org.apps.edit');
  if (app.error) return <LoadError problem={app.error} />;
  if (!app.data) return <Loading what="the app" />;
  const a = app.data;
  const v: AppSettings = edit ?? {
    name: a.name,
    description: a.description ?? '',
    redirectUris: a.redirectUris.join('\n'),
    grants: a.allowedGrantTypes as GrantType[],
    scopes: a.allowedScopes,
    requiredGatePolicyId: a.requiredGatePolicyId ?? '',
  };
  const issuer = window.location.origin;
  return (
    <>
      <BrandNav brand={params.brand} />
      <hgroup>
        <h1>{a.name}</h1>
        <p>
          {APP_TYPE_DEFAULTS[a.type as AppType]?.label ?? a.type} ·{' '}
          {a.isConfidential ? 'confidential' : 'public'} client · {a.enabled ? 'enabled' : 'disabled'}
        </p>
      </hgroup>
      {secret && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
      <section aria-labelledby="integrate-h">
        <h2 id="integrate-h">Integrate</h2>
        <dl>
          <dt>Issuer</dt>
          <dd>
            <code>{issuer}</code> <CopyButton text={issuer} label="Copy issuer" />
          </dd>
          <dt>Discovery URL</dt>
          <dd>
            <code>{issuer}/.well-known/openid-configuration</code>
          </dd>
          <dt>Client id</dt>
          <dd>
            <code>{a.clientId}</code> <CopyButton text={a.clientId} label="Copy client id" />
          </dd>
          <dt>Audience of access tokens</dt>
          <dd>
            <code>{a.brand}</code>
          </dd>
        </dl>
        <details>
          <summary>openid-client snippet</summary>
          <pre>
            <code>
              {openidClientSnippet({
                issuer,
                clientId: a.clientId,
                isConfidential: a.isConfidential,
                redirectUri: a.redirectUris[0],
                scopes: a.allowedScopes,
              })}
            </code>
          </pre>
        </details>
      </section>
      <section aria-labelledby="settings-h">
        <h2 id="settings-h">Settings</h2>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setSaved(false);
            const ok = await save.run(() =>
              unwrap(
                api.PATCH('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}', {
                  params: { path },
                  body: {
                    name: v.name,
                    description: v.description || null,
                    redirectUris: parseUriList(v.redirectUris),
                    allowedGrantTypes: v.grants,
                    allowedScopes: v.scopes,
                    requiredGatePolicyId: v.requiredGatePolicyId || null,
                  },
                }),
              ),
            );
            if (ok) {
              setSaved(true);
              setEdit(null);
              await app.reload();
            }
          }}
        >
          <fieldset disabled={Boolean(deny)}>
            <AppSettingsFields
              v={v}
              set={setEdit}
              brandScopes={(scopes.data?.items ?? []).map((s: Json) => s.name)}
              needsRedirects={APP_TYPE_DEFAULTS[a.type as AppType]?.needsRedirectUris ?? true}
              problem={save.problem}
            />
          </fieldset>
          <FormProblem problem={save.problem} />
          {saved && <p role="status">Saved.</p>}
          <GuardedButton type="submit" denied={deny} aria-busy={save.busy || undefined}>
            Save app
          </GuardedButton>
        </form>
      </section>
      <section aria-labelledby="actions-h">
        <h2 id="actions-h">Actions</h2>
        <div class="row">
          {a.isConfidential && (
            <GuardedButton
              type="button"
              class="secondary"
              denied={deny}
              onClick={() => setConfirmRotate(true)}
            >
              Rotate secret
            </GuardedButton>
          )}
          <GuardedButton
            type="button"
            class="secondary"
            denied={deny}
            aria-busy={toggle.busy || undefined}
            onClick={async () => {
              const ok = await toggle.run(() =>
                unwrap(
                  api.PATCH('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}', {
                    params: { path },
                    body: { enabled: !a.enabled },
                  }),
                ),
              );
              if (ok) await app.reload();
            }}
          >
            {a.enabled ? 'Disable app' : 'Enable app'}
          </GuardedButton>
          <GuardedButton type="button" class="danger" denied={deny} onClick={() => setConfirmDelete(true)}>
            Delete app
          </GuardedButton>
        </div>
        <FormProblem problem={toggle.problem} />
      </section>
      <Confirm
        open={confirmRotate}
        title={`Rotate the secret of ${a.name}?`}
        confirmLabel="Rotate secret"
        busy={rotate.busy}
        problem={rotate.problem}
        onCancel={() => setConfirmRotate(false)}
        onConfirm={async () => {
          const r = await rotate.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}/rotate-secret', {
                params: { path },
              }),
            ),
          );
          if (r) {
            setConfirmRotate(false);
            setSecret(r.clientSecret);
          }
        }}
      >
        <p>The current secret stops working immediately. The new one is shown once.</p>
      </Confirm>
      <Confirm
        open={confirmDelete}
        title={`Delete ${a.name}?`}
        confirmLabel="Delete app"
        typeToConfirm={a.name}
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(
              api.DELETE('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps/{clientId}', {
                params: { path },
              }),
            );
            return true;
          });
          if (ok) route(`/console/orgs/${o.slug}/brands/${params.brand}/apps`);
        }}
      >
        <p>Users can no longer sign in to this app and its tokens stop working.</p>
      </Confirm>
    </>
  );
}
