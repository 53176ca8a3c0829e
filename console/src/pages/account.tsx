import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { ISO_639_1 } from '../../../src/modules/users/languages.js';
import { api, unwrap } from '../api.js';
import { forgetSession } from '../auth.js';
import { Confirm, Empty, Field, FormProblem, LoadError, Loading } from '../components/ui.js';
import { ImageUpload } from '../components/upload.js';
import { type Loaded, useAction, useAvailability, useLoad } from '../hooks.js';
import { slugProblem } from '../lib/slug.js';
import { useSession } from '../session.js';
import { GraceExplanation } from './account-deleted.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** The account's screens: every user has them, whatever their orgs. */
export function AccountNav() {
  const { path } = useLocation();
  const links: [string, string][] = [
    ['/console/account', 'Profile'],
    ['/console/account/sign-in', 'Wallets and sign-in'],
    ['/console/account/api-keys', 'API keys'],
    ['/console/account/apps', 'Connected apps'],
    ['/console/account/sessions', 'Sessions'],
    ['/console/account/delete', 'Delete account'],
  ];
  return (
    <nav aria-label="Account" class="tabs">
      <ul>
        {links.map(([href, label]) => (
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

/**
 * An account screen that is one loaded list: the tabs, the heading, then loading, error, the empty
 * message or the table with these column headings and `row` for each item.
 */
export function AccountList(props: {
  title: string;
  intro: string;
  what: string;
  empty: string;
  list: Loaded<{ items: Json[] }>;
  columns: string[];
  row: (item: Json) => ComponentChildren;
  children?: ComponentChildren;
}) {
  const { list } = props;
  return (
    <>
      <AccountNav />
      <hgroup>
        <h1>{props.title}</h1>
        <p>{props.intro}</p>
      </hgroup>
      {list.loading && !list.data && <Loading what={props.what} />}
      {list.error && <LoadError problem={list.error} />}
      {list.data &&
        (list.data.items.length === 0 ? (
          <Empty>{props.empty}</Empty>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  {props.columns.map((c) => (
                    <th key={c} scope="col">
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>{list.data.items.map(props.row)}</tbody>
            </table>
          </div>
        ))}
      {props.children}
    </>
  );
}

export const when = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

const languageNames = (() => {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' });
  } catch {
    return null;
  }
})();
const LANGUAGES = [...ISO_639_1]
  .map((code) => ({ code, name: languageNames?.of(code) ?? code }))
  .sort((a, b) => a.name.localeCompare(b.name));

/** The username's format, then whether it is free, as the user types. */
function useUsernameCheck(username: string, current: string | undefined) {
  const changed = Boolean(username) && username !== current;
  const format = changed ? slugProblem(username) : null;
  const answer = useAvailability(username, changed && !format, (u) =>
    unwrap(api.POST('/users/username-availability', { body: { username: u } })),
  );
  if (!changed) return { error: null, ok: null };
  if (format) return { error: format, ok: null };
  if (!answer) return { error: null, ok: 'Checking…' };
  return answer.available
    ? { error: null, ok: `${username} is available.` }
    : { error: `${username} is taken.`, ok: null };
}

export function Profile() {
  const { me, reloadMe } = useSession();
  const [firstName, setFirstName] = useState<string>(me.firstName ?? '');
  const [lastName, setLastName] = useState<string>(me.lastName ?? '');
  const [username, setUsername] = useState<string>(me.username ?? '');
  const [language, setLanguage] = useState<string>(me.preferredLanguage ?? '');
  const [picture, setPicture] = useState<{ id: string; url: string } | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const check = useUsernameCheck(username, me.username);
  const activity = useLoad(() => unwrap(api.GET('/users/me/activity', {})), []);
  const pictureUrl = picture?.url ?? me.profilePicture?.url ?? me.externalProfilePictureUrl;
  return (
    <>
      <AccountNav />
      <h1>Your profile</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const body: Json = {
            firstName: firstName.trim() || null,
            lastName: lastName.trim() || null,
            preferredLanguage: language || null,
            ...(username && username !== me.username ? { username } : {}),
            ...(picture ? { profilePicture: picture.id } : {}),
          };
          const ok = await save.run(() =>
            unwrap(api.PATCH('/users/{id}', { params: { path: { id: 'me' } }, body })),
          );
          if (ok) {
            // The new picture stays on screen until the reloaded profile carries it.
            await reloadMe();
            setPicture(null);
            setSaved(true);
          }
        }}
      >
        <div class="grid">
          <Field
            label="First name"
            name="firstName"
            maxLength={80}
            value={firstName}
            problem={save.problem}
            autocomplete="given-name"
            onInput={(e) => setFirstName((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Last name"
            name="lastName"
            maxLength={80}
            value={lastName}
            problem={save.problem}
            autocomplete="family-name"
            onInput={(e) => setLastName((e.target as HTMLInputElement).value)}
          />
        </div>
        <Field
          label="Username"
          name="username"
          value={username}
          autocomplete="username"
          hint={check.ok ?? 'Lower-case letters, digits and dashes; 3 to 30 characters.'}
          error={
            check.error ??
            save.problem?.fields.username ??
            (save.problem?.status === 409 ? save.problem.message : null)
          }
          onInput={(e) => setUsername((e.target as HTMLInputElement).value.trim())}
        />
        <label>
          Language
          <select
            name="preferredLanguage"
            value={language}
            onChange={(e) => setLanguage((e.target as HTMLSelectElement).value)}
          >
            <option value="">Not set (the browser's language)</option>
            {LANGUAGES.map((l) => (
              <option key={l.code} value={l.code}>
                {l.name} ({l.code})
              </option>
            ))}
          </select>
          {save.problem?.fields.preferredLanguage && (
            <small class="field-error">{save.problem.fields.preferredLanguage}</small>
          )}
        </label>
        {pictureUrl && <img class="avatar" src={pictureUrl} alt="You" width={64} height={64} />}
        <ImageUpload
          label="Profile picture (PNG, JPEG, WebP or SVG, up to 2 MB)"
          disabled={false}
          onUploaded={(id, url) => setPicture({ id, url })}
        />
        <FormProblem problem={save.problem?.status === 409 ? undefined : save.problem} />
        {saved && <p role="status">Saved.</p>}
        <button type="submit" disabled={save.busy || Boolean(check.error)} aria-busy={save.busy || undefined}>
          Save profile
        </button>
      </form>
      <section aria-labelledby="activity-h">
        <h2 id="activity-h">Recent activity</h2>
        {activity.loading && !activity.data && <Loading what="activity" />}
        {activity.error && <LoadError problem={activity.error} />}
        {activity.data &&
          (activity.data.items.length === 0 ? (
            <Empty>No sign-in activity yet.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">What</th>
                    <th scope="col">With</th>
                    <th scope="col">From</th>
                  </tr>
                </thead>
                <tbody>
                  {activity.data.items.map((a: Json, i: number) => (
                    <tr key={i}>
                      <td>{when(a.timestamp)}</td>
                      <td>{ACTIVITY[a.type] ?? a.type}</td>
                      <td>{a.provider ?? '—'}</td>
                      <td>
                        {a.ip ?? '—'}
                        {a.userAgent && (
                          <>
                            <br />
                            <small>{a.userAgent}</small>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
      </section>
    </>
  );
}

const ACTIVITY: Record<string, string> = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in failed',
  link_provider: 'Linked a sign-in method',
  unlink_provider: 'Removed a sign-in method',
  device_authorized: 'Authorized a device',
};

/** The account's consent grants: the apps it let in, with their scopes; revoking one signs the app out. */
export function ConnectedApps() {
  const grants = useLoad(() => unwrap(api.GET('/users/me/consent-grants', {})), []);
  const revoke = useAction();
  const [target, setTarget] = useState<Json | null>(null);
  return (
    <AccountList
      title="Connected apps"
      intro="Apps you allowed to use your account, and what they may see. Revoking one signs you out of it."
      what="your apps"
      empty="You have not allowed any app yet."
      list={grants}
      columns={['App', 'Scopes', 'Allowed', 'Actions']}
      row={(g: Json) => (
        <tr key={g.id}>
          <th scope="row">
            <code>{g.app}</code>
          </th>
          <td data-label="Scopes">{g.scopes.join(', ')}</td>
          <td data-label="Allowed">{when(g.updatedAt)}</td>
          <td data-label="Actions">
            <button
              type="button"
              class="secondary outline"
              aria-label={`Revoke access of ${g.app}`}
              onClick={() => {
                revoke.clear();
                setTarget(g);
              }}
            >
              Revoke
            </button>
          </td>
        </tr>
      )}
    >
      <Confirm
        open={target !== null}
        title={`Revoke access of ${target?.app ?? ''}?`}
        confirmLabel="Revoke access"
        busy={revoke.busy}
        problem={revoke.problem}
        onCancel={() => setTarget(null)}
        onConfirm={async () => {
          const ok = await revoke.run(async () => {
            await unwrap(
              api.DELETE('/users/me/consent-grants/{appId}', { params: { path: { appId: target.app } } }),
            );
            return true;
          });
          if (ok) {
            setTarget(null);
            await grants.reload();
          }
        }}
      >
        <p>
          The app loses the scopes {target?.scopes.join(', ')} and its sessions end at once: its refresh
          tokens stop working. If you use it again it asks for your consent again.
        </p>
      </Confirm>
    </AccountList>
  );
}

/** Account deletion with its grace window spelled out; the session ends at once. */
export function DeleteAccount() {
  const { me } = useSession();
  const { route } = useLocation();
  const del = useAction();
  const [confirm, setConfirm] = useState(false);
  const name = me.username ?? me.id;
  return (
    <>
      <AccountNav />
      <h1>Delete your account</h1>
      <GraceExplanation />
      <button type="button" class="danger" onClick={() => setConfirm(true)}>
        Delete my account
      </button>
      <Confirm
        open={confirm}
        title="Delete your account?"
        confirmLabel="Delete my account"
        typeToConfirm={name}
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirm(false)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(api.DELETE('/users/me', {}));
            return true;
          });
          if (ok) {
            forgetSession();
            route('/console/account-deleted', true);
          }
        }}
      >
        <p>You are signed out everywhere at once. Signing in again within 30 days restores the account.</p>
      </Confirm>
    </>
  );
}
