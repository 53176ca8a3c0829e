import { useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import {
  CopyButton,
  Empty,
  Field,
  FormProblem,
  GuardedButton,
  LoadError,
  Loading,
} from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { PROVIDER_TYPES, type ProviderType } from '../lib/providers.js';
import { useOrg } from '../session.js';
import { BrandNav } from './brands.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

interface ConfigField {
  key: string;
  label: string;
  secret?: boolean;
  multiline?: boolean;
  optional?: boolean;
  hint?: string;
}

const OAUTH: ConfigField[] = [
  { key: 'clientId', label: 'Client id' },
  { key: 'clientSecret', label: 'Client secret', secret: true },
  { key: 'scopes', label: 'Scopes (optional, space-separated)', optional: true },
];

/** The fields of each provider's configuration (DESIGN.md §4 ProviderConfig). */
const CONFIG_FIELDS: Record<string, ConfigField[]> = {
  google: OAUTH,
  discord: OAUTH,
  facebook: OAUTH,
  x: OAUTH,
  matrica: OAUTH,
  microsoft: [
    ...OAUTH,
    {
      key: 'tenant',
      label: 'Tenant (optional)',
      optional: true,
      hint: 'common, organizations, or a tenant id',
    },
  ],
  apple: [
    { key: 'clientId', label: 'Services id' },
    { key: 'teamId', label: 'Team id' },
    { key: 'keyId', label: 'Key id' },
    { key: 'privateKey', label: 'Private key (PEM)', secret: true, multiline: true },
  ],
  telegram: [
    { key: 'botToken', label: 'Bot token', secret: true },
    { key: 'botUsername', label: 'Bot username' },
  ],
};

const LABELS: Record<string, string> = {
  google: 'Google',
  apple: 'Apple',
  microsoft: 'Microsoft',
  discord: 'Discord',
  facebook: 'Facebook',
  x: 'X',
  telegram: 'Telegram',
  matrica: 'Matrica',
};

function configOf(type: string, values: Record<string, string>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS[type]) {
    const v = values[f.key]?.trim();
    if (!v) continue;
    config[f.key] = f.key === 'scopes' ? v.split(/\s+/) : v;
  }
  return config;
}

export function Connections() {
  const o = useOrg();
  const { params } = useRoute();
  const path = { orgSlug: o.slug, brandSlug: params.brand as string };
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}/connections', { params: { path } }),
      ),
    [o.slug, params.brand],
  );
  const [type, setType] = useState<ProviderType>('google');
  const [values, setValues] = useState<Record<string, string>>({});
  const put = useAction();
  const row = useAction();
  const deny = o.deny('org.connections.edit');
  return (
    <>
      <BrandNav brand={params.brand} />
      <hgroup>
        <h1>Connections</h1>
        <p>
          The brand's own credentials for an upstream sign-in provider. Without one, the operator's
          credentials are used.
        </p>
      </hgroup>
      {list.loading && !list.data && <Loading what="connections" />}
      {list.error && <LoadError problem={list.error} />}
      {list.data &&
        (list.data.items.length === 0 ? (
          <Empty>No connections: every provider uses the operator's credentials.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Callback URL to register</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((c: Json) => (
                  <tr key={c.type}>
                    <th scope="row">{LABELS[c.type] ?? c.type}</th>
                    <td>
                      <code>{c.callbackUrl}</code>{' '}
                      <CopyButton
                        text={c.callbackUrl}
                        label={`Copy the ${LABELS[c.type] ?? c.type} callback URL`}
                      />
                    </td>
                    <td>{c.enabled ? 'Enabled' : 'Disabled'}</td>
                    <td>
                      <div class="row">
                        <GuardedButton
                          type="button"
                          class="secondary outline"
                          denied={deny}
                          onClick={async () => {
                            if (
                              await row.run(() =>
                                unwrap(
                                  api.PATCH(
                                    '/identity/organizations/{orgSlug}/brands/{brandSlug}/connections/{type}/enabled',
                                    {
                                      params: { path: { ...path, type: c.type } },
                                      body: { enabled: !c.enabled },
                                    },
                                  ),
                                ),
                              )
                            )
                              await list.reload();
                          }}
                        >
                          {c.enabled ? `Disable ${LABELS[c.type]}` : `Enable ${LABELS[c.type]}`}
                        </GuardedButton>
                        <GuardedButton
                          type="button"
                          class="secondary outline"
                          denied={deny}
                          onClick={async () => {
                            const ok = await row.run(async () => {
                              await unwrap(
                                api.DELETE(
                                  '/identity/organizations/{orgSlug}/brands/{brandSlug}/connections/{type}',
                                  { params: { path: { ...path, type: c.type } } },
                                ),
                              );
                              return true;
                            });
                            if (ok) await list.reload();
                          }}
                        >
                          {`Delete ${LABELS[c.type]} connection`}
                        </GuardedButton>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <FormProblem problem={row.problem} />
      <h2>Add or replace a connection</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await put.run(() =>
            unwrap(
              api.PUT('/identity/organizations/{orgSlug}/brands/{brandSlug}/connections', {
                params: { path },
                body: { type, enabled: true, config: configOf(type, values) },
              }),
            ),
          );
          if (ok) {
            setValues({});
            await list.reload();
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <label>
            Provider
            <select
              name="type"
              value={type}
              onChange={(e) => {
                setType((e.target as HTMLSelectElement).value as ProviderType);
                setValues({});
              }}
            >
              {PROVIDER_TYPES.map((t) => (
                <option key={t} value={t}>
                  {LABELS[t]}
                </option>
              ))}
            </select>
          </label>
          {CONFIG_FIELDS[type].map((f) => (
            <Field
              key={`${type}-${f.key}`}
              label={f.label}
              name={f.key}
              type={f.secret && !f.multiline ? 'password' : 'text'}
              autocomplete="off"
              multiline={f.multiline}
              required={!f.optional}
              hint={f.hint}
              value={values[f.key] ?? ''}
              problem={put.problem}
              onInput={(e) => setValues({ ...values, [f.key]: (e.target as HTMLInputElement).value })}
            />
          ))}
        </fieldset>
        <FormProblem problem={put.problem} />
        <GuardedButton type="submit" denied={deny} aria-busy={put.busy || undefined}>
          Save connection
        </GuardedButton>
      </form>
    </>
  );
}
