import { useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Empty, Field, FormProblem, GuardedButton, LoadError, Loading } from '../components/ui.js';
import { PolicyPicker } from '../components/policy-picker.js';
import { useAction, useLoad } from '../hooks.js';
import { scopeNameProblem } from '../lib/slug.js';
import { useOrg } from '../session.js';
import { BrandNav } from './brands.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

function ScopeRow({
  s,
  path,
  deny,
  appNames,
  onChange,
}: {
  s: Json;
  path: { orgSlug: string; brandSlug: string };
  deny: string | null;
  appNames: Map<string, string>;
  onChange: () => void;
}) {
  const [description, setDescription] = useState<string>(s.description);
  const [policy, setPolicy] = useState<string>(s.gatePolicyId ?? '');
  const save = useAction();
  const del = useAction();
  const usedBy =
    del.problem?.status === 409 ? ((del.problem.details.apps as string[] | undefined) ?? []) : [];
  return (
    <tr>
      <th scope="row">
        <code>{s.name}</code>
      </th>
      <td>
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            if (
              await save.run(() =>
                unwrap(
                  api.PATCH('/identity/organizations/{orgSlug}/brands/{brandSlug}/scopes/{name}', {
                    params: { path: { ...path, name: s.name } },
                    body: { description, gatePolicyId: policy || null },
                  }),
                ),
              )
            )
              onChange();
          }}
        >
          <Field
            label={`Description of ${s.name}`}
            name="description"
            value={description}
            disabled={Boolean(deny)}
            problem={save.problem}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
          />
          <PolicyPicker
            label={`Gate policy of ${s.name}`}
            name="gatePolicyId"
            none="None"
            value={policy}
            disabled={Boolean(deny)}
            problem={save.problem}
            onChange={setPolicy}
          />
          <GuardedButton
            type="submit"
            class="secondary"
            denied={deny}
            disabled={description === s.description && policy === (s.gatePolicyId ?? '')}
          >
            Save
          </GuardedButton>
        </form>
      </td>
      <td>
        <GuardedButton
          type="button"
          class="secondary outline"
          denied={deny}
          aria-label={`Delete scope ${s.name}`}
          onClick={async () => {
            const ok = await del.run(async () => {
              await unwrap(
                api.DELETE('/identity/organizations/{orgSlug}/brands/{brandSlug}/scopes/{name}', {
                  params: { path: { ...path, name: s.name } },
                }),
              );
              return true;
            });
            if (ok) onChange();
          }}
        >
          Delete
        </GuardedButton>
        {usedBy.length > 0 ? (
          <p role="alert" class="form-error">
            Used by apps {usedBy.map((id) => appNames.get(id) ?? id).join(', ')}: remove it from them first.
          </p>
        ) : (
          <FormProblem problem={del.problem} />
        )}
      </td>
    </tr>
  );
}

export function Scopes() {
  const o = useOrg();
  const { params } = useRoute();
  const path = { orgSlug: o.slug, brandSlug: params.brand as string };
  const scopes = useLoad(
    () =>
      unwrap(api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/scopes', { params: { path } })),
    [o.slug, params.brand],
  );
  const apps = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/apps', {
          params: { path, query: { limit: 100, offset: 0 } },
        }),
      ).catch(() => ({ items: [] })),
    [o.slug, params.brand],
  );
  const appNames = new Map<string, string>((apps.data?.items ?? []).map((a: Json) => [a.clientId, a.name]));
  const create = useAction();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [gatePolicyId, setGatePolicyId] = useState('');
  const deny = o.deny('org.scopes.edit');
  const nameError = name ? scopeNameProblem(name) : null;
  return (
    <>
      <BrandNav brand={params.brand} />
      <hgroup>
        <h1>Scopes</h1>
        <p>
          The brand's own scopes, beside openid, profile, email, offline_access, wallet and gates. Users see
          the description on the consent screen. A scope with a gate policy is granted only while a linked
          wallet of the user passes it.
        </p>
      </hgroup>
      {scopes.loading && !scopes.data && <Loading what="scopes" />}
      {scopes.error && <LoadError problem={scopes.error} />}
      {scopes.data &&
        (scopes.data.items.length === 0 ? (
          <Empty>No scopes yet.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {scopes.data.items.map((s: Json) => (
                  <ScopeRow
                    key={s.name}
                    s={s}
                    path={path}
                    deny={deny}
                    appNames={appNames}
                    onChange={scopes.reload}
                  />
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <h2>Add a scope</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await create.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/brands/{brandSlug}/scopes', {
                params: { path },
                body: { name, description, ...(gatePolicyId ? { gatePolicyId } : {}) },
              }),
            ),
          );
          if (ok) {
            setName('');
            setDescription('');
            setGatePolicyId('');
            await scopes.reload();
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <Field
            label="Scope name"
            name="name"
            required
            placeholder="orders:read"
            value={name}
            hint="resource:action; lower-case letters, digits, colons, dashes and underscores. It cannot change."
            error={nameError ?? (create.problem?.status === 409 ? create.problem.message : null)}
            problem={create.problem}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Scope description"
            name="description"
            required
            value={description}
            problem={create.problem}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
          />
          <PolicyPicker
            label="Gate policy (optional)"
            name="gatePolicyId"
            none="None: granted as usual"
            value={gatePolicyId}
            hint="Granted only while one of the user's linked wallets passes this gate policy."
            problem={create.problem}
            onChange={setGatePolicyId}
          />
        </fieldset>
        <FormProblem problem={create.problem?.status === 409 ? undefined : create.problem} />
        <GuardedButton
          type="submit"
          denied={deny}
          disabled={Boolean(nameError) || !name}
          aria-busy={create.busy || undefined}
        >
          Add scope
        </GuardedButton>
      </form>
    </>
  );
}
