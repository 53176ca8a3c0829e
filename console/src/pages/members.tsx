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
import { useAction, useLoad } from '../hooks.js';
import { allPermissions, groupPermissions } from '../lib/permissions.js';
import { useOrg, useSession } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** A member's name: username, else their name, else their primary wallet (shortened), else the id. */
const display = (m: Json) => {
  const u = m.user ?? {};
  const wallet = u.userPublicKeys?.find((k: Json) => k.isPrimary)?.address ?? u.userPublicKeys?.[0]?.address;
  return (
    u.username ??
    ([u.firstName, u.lastName].filter(Boolean).join(' ') ||
      (wallet ? `${wallet.slice(0, 4)}…${wallet.slice(-4)}` : m.userId))
  );
};

function MemberRow({ m, onChange }: { m: Json; onChange: () => Promise<void> }) {
  const o = useOrg();
  const { me } = useSession();
  const action = useAction();
  const [add, setAdd] = useState('');
  const [confirm, setConfirm] = useState(false);
  const deny = o.deny('org.members.edit');
  const path = { orgSlug: o.slug, userId: m.userId };
  const held = new Set(m.roles.map((r: Json) => r.id));
  const name = display(m);
  return (
    <tr>
      <th scope="row">
        {name}
        {m.userId === me.id && ' (you)'}
      </th>
      <td>
        <ul class="row">
          {m.roles.map((r: Json) => (
            <li key={r.id}>
              {r.name}{' '}
              <GuardedButton
                type="button"
                class="secondary outline"
                denied={deny}
                disabled={m.roles.length === 1}
                aria-label={`Remove role ${r.name} from ${name}`}
                onClick={async () => {
                  const ok = await action.run(async () => {
                    await unwrap(
                      api.DELETE('/identity/organizations/{orgSlug}/members/{userId}/roles/{roleId}', {
                        params: { path: { ...path, roleId: r.id } },
                      }),
                    );
                    return true;
                  });
                  if (ok) await onChange();
                }}
              >
                ×
              </GuardedButton>
            </li>
          ))}
        </ul>
      </td>
      <td>
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            if (!add) return;
            if (
              await action.run(() =>
                unwrap(
                  api.POST('/identity/organizations/{orgSlug}/members/{userId}/roles', {
                    params: { path },
                    body: { roleId: add },
                  }),
                ),
              )
            ) {
              setAdd('');
              await onChange();
            }
          }}
        >
          <select
            aria-label={`Role to add to ${name}`}
            value={add}
            disabled={Boolean(deny)}
            onChange={(e) => setAdd((e.target as HTMLSelectElement).value)}
          >
            <option value="">Add a role…</option>
            {o.roles
              .filter((r) => !held.has(r.id))
              .map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
          </select>
          <GuardedButton type="submit" class="secondary" denied={deny} disabled={!add}>
            Add role
          </GuardedButton>
        </form>
        <GuardedButton
          type="button"
          class="secondary outline"
          denied={deny}
          disabled={m.userId === me.id}
          onClick={() => setConfirm(true)}
        >
          {`Remove ${name}`}
        </GuardedButton>
        <FormProblem problem={action.problem} />
        <Confirm
          open={confirm}
          title={`Remove ${name} from ${o.org.name}?`}
          confirmLabel="Remove member"
          busy={action.busy}
          problem={action.problem}
          onCancel={() => setConfirm(false)}
          onConfirm={async () => {
            const ok = await action.run(async () => {
              await unwrap(
                api.DELETE('/identity/organizations/{orgSlug}/members/{userId}', { params: { path } }),
              );
              return true;
            });
            if (ok) {
              setConfirm(false);
              await onChange();
            }
          }}
        >
          <p>
            They lose access to the organization. Access tokens already issued stay valid until they expire.
          </p>
        </Confirm>
      </td>
    </tr>
  );
}

function Invitations() {
  const o = useOrg();
  const path = { orgSlug: o.slug };
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/invitations', {
          params: { path, query: { status: 'pending' } },
        }),
      ),
    [o.slug],
  );
  const create = useAction();
  const revoke = useAction();
  const [roleIds, setRoleIds] = useState<string[]>([]);
  const [days, setDays] = useState('7');
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null);
  const deny = o.deny('org.members.edit');
  return (
    <section aria-labelledby="inv-h">
      <h2 id="inv-h">Invitations</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const inv = await create.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/invitations', {
                params: { path },
                body: { roleIds, expiresInDays: Number(days) },
              }),
            ),
          );
          if (inv) {
            setLink({ url: inv.url, expiresAt: inv.expiresAt });
            await list.reload();
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <fieldset>
            <legend>Roles of the new member</legend>
            {o.roles
              .filter((r) => !(r.isBuiltIn && r.name === 'Owner'))
              .map((r) => (
                <label key={r.id}>
                  <input
                    type="checkbox"
                    name="roleIds"
                    checked={roleIds.includes(r.id)}
                    onChange={() =>
                      setRoleIds(
                        roleIds.includes(r.id) ? roleIds.filter((x) => x !== r.id) : [...roleIds, r.id],
                      )
                    }
                  />
                  {r.name}
                </label>
              ))}
            {create.problem?.fields.roleIds && (
              <small class="field-error">{create.problem.fields.roleIds}</small>
            )}
          </fieldset>
          <Field
            label="Valid for (days)"
            name="expiresInDays"
            type="number"
            min={1}
            max={30}
            value={days}
            problem={create.problem}
            onInput={(e) => setDays((e.target as HTMLInputElement).value)}
          />
        </fieldset>
        <FormProblem problem={create.problem} />
        <GuardedButton
          type="submit"
          denied={deny}
          disabled={roleIds.length === 0}
          aria-busy={create.busy || undefined}
        >
          Create invitation link
        </GuardedButton>
      </form>
      {link && (
        <article aria-labelledby="link-h">
          <h3 id="link-h">Invitation link</h3>
          <p>Send this link to the person you invite. It works once and is shown only now.</p>
          <p>
            <code class="secret" data-testid="invitation-url">
              {link.url}
            </code>
          </p>
          <CopyButton text={link.url} label="Copy invitation link" />
        </article>
      )}
      {list.error && <LoadError problem={list.error} />}
      {list.data &&
        (list.data.items.length === 0 ? (
          <Empty>No pending invitations.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Roles</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((i: Json) => (
                  <tr key={i.id}>
                    <td>{i.roles.map((r: Json) => r.name).join(', ')}</td>
                    <td>{new Date(i.expiresAt).toLocaleString()}</td>
                    <td>
                      <GuardedButton
                        type="button"
                        class="secondary outline"
                        denied={deny}
                        aria-label={`Revoke the invitation for ${i.roles.map((r: Json) => r.name).join(', ')} created ${new Date(i.createdAt).toLocaleString()}`}
                        onClick={async () => {
                          const ok = await revoke.run(async () => {
                            await unwrap(
                              api.DELETE('/identity/organizations/{orgSlug}/invitations/{invitationId}', {
                                params: { path: { ...path, invitationId: i.id } },
                              }),
                            );
                            return true;
                          });
                          if (ok) await list.reload();
                        }}
                      >
                        Revoke
                      </GuardedButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <FormProblem problem={revoke.problem} />
    </section>
  );
}

export function Members() {
  const o = useOrg();
  if (!o.members)
    return (
      <>
        <h1>Members</h1>
        {o.membersProblem && <LoadError problem={o.membersProblem} />}
      </>
    );
  return (
    <>
      <h1>Members</h1>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Roles</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {o.members.map((m) => (
              <MemberRow key={m.userId} m={m} onChange={o.reload} />
            ))}
          </tbody>
        </table>
      </div>
      <Invitations />
    </>
  );
}

/** Permission checkboxes grouped by resource, built from the permissions the API's roles carry. */
function PermissionPicker({
  all,
  value,
  onChange,
  readOnly,
}: {
  all: string[];
  value: string[];
  onChange?: (v: string[]) => void;
  readOnly?: boolean;
}) {
  return (
    <div class="perm-groups">
      {groupPermissions(all).map((g) => (
        <fieldset key={g.resource}>
          <legend>{g.resource}</legend>
          {g.permissions.map((p) => (
            <label key={p}>
              <input
                type="checkbox"
                name="permissions"
                value={p}
                checked={value.includes(p)}
                disabled={readOnly}
                onChange={() => onChange?.(value.includes(p) ? value.filter((x) => x !== p) : [...value, p])}
              />
              <code>{p}</code>
            </label>
          ))}
        </fieldset>
      ))}
    </div>
  );
}

function RoleEditor({ role, all, onDone }: { role?: Json; all: string[]; onDone: () => Promise<void> }) {
  const o = useOrg();
  const action = useAction();
  const [name, setName] = useState<string>(role?.name ?? '');
  const [description, setDescription] = useState<string>(role?.description ?? '');
  const [perms, setPerms] = useState<string[]>(role?.permissions ?? ['org.read']);
  const deny = o.deny('org.members.edit');
  const path = { orgSlug: o.slug };
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const body = { name, description: description || (role ? null : undefined), permissions: perms };
        const ok = await action.run(() =>
          role
            ? unwrap(
                api.PATCH('/identity/organizations/{orgSlug}/roles/{roleId}', {
                  params: { path: { ...path, roleId: role.id } },
                  body,
                }),
              )
            : unwrap(
                api.POST('/identity/organizations/{orgSlug}/roles', {
                  params: { path },
                  body: { ...body, description: description || undefined },
                }),
              ),
        );
        if (ok) {
          if (!role) {
            setName('');
            setDescription('');
          }
          await onDone();
        }
      }}
    >
      <fieldset disabled={Boolean(deny)}>
        <Field
          label="Role name"
          name="name"
          required
          maxLength={60}
          value={name}
          problem={action.problem}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <Field
          label="Role description"
          name="description"
          value={description}
          problem={action.problem}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <PermissionPicker all={all} value={perms} onChange={setPerms} />
        {action.problem?.fields.permissions && (
          <small class="field-error">{action.problem.fields.permissions}</small>
        )}
      </fieldset>
      <FormProblem problem={action.problem} />
      <GuardedButton type="submit" denied={deny} aria-busy={action.busy || undefined}>
        {role ? `Save role ${role.name}` : 'Create role'}
      </GuardedButton>
    </form>
  );
}

export function Roles() {
  const o = useOrg();
  const path = { orgSlug: o.slug };
  const roles = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/roles', { params: { path } })),
    [o.slug],
  );
  const del = useAction();
  if (roles.error) return <LoadError problem={roles.error} />;
  if (!roles.data) return <Loading what="roles" />;
  const all = allPermissions(roles.data.items);
  const reload = async () => {
    await Promise.all([roles.reload(), o.reload()]);
  };
  return (
    <>
      <h1>Roles</h1>
      {roles.data.items.length === 0 && <Empty>No roles.</Empty>}
      {roles.data.items.map((r: Json) => (
        <details key={r.id}>
          <summary>
            {r.name} {r.isBuiltIn ? '(built-in, read-only)' : ''}
          </summary>
          {r.isBuiltIn ? (
            <PermissionPicker all={all} value={r.permissions} readOnly />
          ) : (
            <>
              <RoleEditor role={r} all={all} onDone={reload} />
              <GuardedButton
                type="button"
                class="secondary outline"
                denied={o.deny('org.members.edit')}
                onClick={async () => {
                  const ok = await del.run(async () => {
                    await unwrap(
                      api.DELETE('/identity/organizations/{orgSlug}/roles/{roleId}', {
                        params: { path: { ...path, roleId: r.id } },
                      }),
                    );
                    return true;
                  });
                  if (ok) await reload();
                }}
              >
                {`Delete role ${r.name}`}
              </GuardedButton>
              <FormProblem problem={del.problem} />
            </>
          )}
        </details>
      ))}
      <h2>Create a custom role</h2>
      <RoleEditor all={all} onDone={reload} />
    </>
  );
}
