import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Confirm } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { AccountList, when } from './account.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** The button's name: its visible text, then the brand and start (unique enough to tell rows apart). */
const endName = (s: Json) => `End session on ${s.brand} started ${when(s.createdAt)}`;

/**
 * The account's browser sessions on every brand. Ending one signs that browser out of the brand,
 * revokes the tokens issued in it and tells the apps signed in through it (back-channel logout).
 * This browser's own session ends with Sign out instead.
 */
export function Sessions() {
  const sessions = useLoad(() => unwrap(api.GET('/users/me/sessions', {})), []);
  const end = useAction();
  const [target, setTarget] = useState<Json | null>(null);
  const row = (s: Json) => (
    <tr key={s.id}>
      <th scope="row">
        <code>{s.brand}</code>
        {s.current && <span class="badge"> This browser</span>}
      </th>
      <td data-label="Browser">
        {s.userAgent ?? 'Unknown browser'}
        {s.ip && <small> · {s.ip}</small>}
      </td>
      <td data-label="Started">{when(s.createdAt)}</td>
      <td data-label="Last active">{when(s.lastSeenAt)}</td>
      <td data-label="Actions">
        {s.current ? (
          <small>Use Sign out</small>
        ) : (
          <button
            type="button"
            class="secondary outline"
            aria-label={endName(s)}
            onClick={() => {
              end.clear();
              setTarget(s);
            }}
          >
            End session
          </button>
        )}
      </td>
    </tr>
  );
  return (
    <AccountList
      title="Sessions"
      intro="Where you are signed in, on every brand. Ending a session signs that browser out and the apps it let in."
      what="your sessions"
      empty="You are not signed in anywhere."
      list={sessions}
      columns={['Brand', 'Browser', 'Started', 'Last active', 'Actions']}
      row={row}
    >
      <Confirm
        open={target !== null}
        title={target ? `${endName(target)}?` : ''}
        confirmLabel="End session"
        busy={end.busy}
        problem={end.problem}
        onCancel={() => setTarget(null)}
        onConfirm={async () => {
          const ok = await end.run(async () => {
            await unwrap(api.DELETE('/users/me/sessions/{id}', { params: { path: { id: target.id } } }));
            return true;
          });
          if (ok) {
            setTarget(null);
            await sessions.reload();
          }
        }}
      >
        <p>
          That browser is signed out of {target?.brand} at once: the tokens issued in the session stop working
          and the apps signed in through it are told.
        </p>
      </Confirm>
    </AccountList>
  );
}
