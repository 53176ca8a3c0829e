import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Confirm, CopyButton, Empty, Field, FormProblem, LoadError, Loading } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { allPermissions, groupPermissions } from '../lib/permissions.js';
import { useSession } from '../session.js';
import { AccountNav, when } from './account.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

const USER_SCOPES: [string, string][] = [
  ['users:read', 'Read your profile, wallets, apps and activity'],
  ['users:write', 'Change your profile and wallets'],
];

/**
 * The scopes a key may carry: the user scopes, the org permissions (from the roles of the user's
 * first org, whose Owner role holds them all) and the system permissions the user holds.
 */
function useOrgPermissions(): string[] {
  const { orgs } = useSession();
  const first = orgs[0]?.slug as string | undefined;
  const roles = useLoad(
    () =>
      first
        ? unwrap(api.GET('/identity/organizations/{orgSlug}/roles', { params: { path: { orgSlug: first } } }))
        : Promise.resolve({ items: [], total: 0 }),
    [first],
  );
  return allPermissions(roles.data?.items ?? []);
}

export function ApiKeys() {
  const { system } = useSession();
  const keys = useLoad(() => unwrap(api.GET('/users/me/api-keys', {})), []);
  const orgPermissions = useOrgPermissions();
  const create = useAction();
  const revoke = useAction();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [allowlist, setAllowlist] = useState('');
  const [created, setCreated] = useState<Json | null>(null);
  const [revoking, setRevoking] = useState<Json | null>(null);
  const toggle = (scope: string, on: boolean) =>
    setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  const box = (scope: string, label?: string) => (
    <label key={scope}>
      <input
        type="checkbox"
        name="scopes"
        value={scope}
        checked={scopes.includes(scope)}
        onChange={(e) => toggle(scope, (e.target as HTMLInputElement).checked)}
      />
      {label ? `${scope} — ${label}` : scope}
    </label>
  );
  const live = (keys.data?.items ?? []).filter((k: Json) => !k.revokedAt);
  const revoked = (keys.data?.items ?? []).filter((k: Json) => k.revokedAt);
  return (
    <>
      <AccountNav />
      <hgroup>
        <h1>API keys</h1>
        <p>A key acts as you from scripts and servers, within its scopes and your own permissions.</p>
      </hgroup>
      {created && (
        <article aria-labelledby="key-h" class="secret-box">
          <h2 id="key-h">Your new key: {created.name}</h2>
          <p>
            <strong>Copy it now: this is the only time it is shown.</strong> Gatehouse keeps only a hash.
          </p>
          <p>
            <code class="secret" data-testid="api-key">
              {created.key}
            </code>
          </p>
          <div class="row">
            <CopyButton text={created.key} label="Copy key" />
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have saved the key
            </button>
          </div>
        </article>
      )}
      {keys.loading && !keys.data && <Loading what="your keys" />}
      {keys.error && <LoadError problem={keys.error} />}
      {keys.data &&
        (live.length === 0 ? (
          <Empty>No active API keys.</Empty>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Allowed from</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {live.map((k: Json) => (
                  <tr key={k.id}>
                    <th scope="row">{k.name}</th>
                    <td data-label="Prefix">
                      <code>{k.prefix}…</code>
                    </td>
                    <td data-label="Scopes">{k.scopes.length ? k.scopes.join(', ') : 'all (as you)'}</td>
                    <td data-label="Expires">{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
                    <td data-label="Allowed from">
                      {k.ipAllowlist.length ? k.ipAllowlist.join(', ') : 'anywhere'}
                    </td>
                    <td data-label="Last used">{when(k.lastUsedAt)}</td>
                    <td data-label="Actions">
                      <button
                        type="button"
                        class="secondary outline"
                        aria-label={`Revoke the key ${k.name}`}
                        onClick={() => {
                          revoke.clear();
                          setRevoking(k);
                        }}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {revoked.length > 0 && (
        <details>
          <summary>Revoked keys ({revoked.length})</summary>
          <ul>
            {revoked.map((k: Json) => (
              <li key={k.id}>
                {k.name} (<code>{k.prefix}…</code>), revoked {when(k.revokedAt)}
              </li>
            ))}
          </ul>
        </details>
      )}
      <h2>Create a key</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const ips = allowlist
            .split(/[\s,]+/)
            .map((s) => s.trim())
            .filter(Boolean);
          const key = await create.run(() =>
            unwrap(
              api.POST('/users/me/api-keys', {
                body: {
                  name,
                  scopes,
                  ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}),
                  ...(ips.length ? { ipAllowlist: ips } : {}),
                },
              }),
            ),
          );
          if (key) {
            setCreated(key);
            setName('');
            setScopes([]);
            setExpires('');
            setAllowlist('');
            await keys.reload();
          }
        }}
      >
        <Field
          label="Key name"
          name="name"
          required
          maxLength={80}
          value={name}
          problem={create.problem}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <fieldset>
          <legend>Scopes</legend>
          <small>None checked: the key can do everything you can.</small>
          {USER_SCOPES.map(([s, label]) => box(s, label))}
          {[...system].map((s) => box(s, 'system permission'))}
          {orgPermissions.length > 0 && (
            <details>
              <summary>Organization permissions</summary>
              <div class="perm-groups">
                {groupPermissions(orgPermissions).map((g) => (
                  <fieldset key={g.resource}>
                    <legend>{g.resource}</legend>
                    {g.permissions.map((p) => box(p))}
                  </fieldset>
                ))}
              </div>
            </details>
          )}
          {create.problem?.fields.scopes && <small class="field-error">{create.problem.fields.scopes}</small>}
        </fieldset>
        <Field
          label="Expires (optional)"
          name="expiresAt"
          type="date"
          value={expires}
          hint="At the end of that day; no date: the key does not expire."
          problem={create.problem}
          onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
        />
        <Field
          label="IP allowlist (optional)"
          name="ipAllowlist"
          multiline
          rows={2}
          value={allowlist}
          placeholder="203.0.113.0/24"
          hint="Addresses or CIDR ranges, one per line; empty: from anywhere."
          problem={create.problem}
          onInput={(e) => setAllowlist((e.target as HTMLTextAreaElement).value)}
        />
        <FormProblem problem={create.problem} />
        <button type="submit" disabled={create.busy || !name.trim()} aria-busy={create.busy || undefined}>
          Create key
        </button>
      </form>
      <Confirm
        open={revoking !== null}
        title={`Revoke the key ${revoking?.name ?? ''}?`}
        confirmLabel="Revoke key"
        busy={revoke.busy}
        problem={revoke.problem}
        onCancel={() => setRevoking(null)}
        onConfirm={async () => {
          const ok = await revoke.run(() =>
            unwrap(api.DELETE('/users/me/api-keys/{id}', { params: { path: { id: revoking.id } } })),
          );
          if (ok) {
            setRevoking(null);
            await keys.reload();
          }
        }}
      >
        <p>Requests with this key are refused at once. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
