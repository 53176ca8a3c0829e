import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { FormProblem } from '../components/ui.js';
import { useAction } from '../hooks.js';
import { useSession } from '../session.js';

/** The invitee's page: the token is in the link's fragment, so it never reaches a server log. */
export function AcceptInvitation() {
  const { reloadOrgs } = useSession();
  const { route } = useLocation();
  const [token] = useState(() => new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '');
  const action = useAction();
  if (!token)
    return (
      <p role="alert" class="form-error">
        This invitation link is incomplete. Ask for a new one.
      </p>
    );
  return (
    <>
      <h1>Join an organization</h1>
      <p>
        You were invited to join an organization on Gatehouse. Accepting adds you as a member with the roles
        the invitation gives.
      </p>
      <FormProblem problem={action.problem} />
      <button
        type="button"
        aria-busy={action.busy || undefined}
        onClick={async () => {
          const r = await action.run(() =>
            unwrap(api.POST('/identity/invitations/accept', { body: { token } })),
          );
          if (r) {
            await reloadOrgs();
            route(`/console/orgs/${r.org.slug}`);
          }
        }}
      >
        Accept invitation
      </button>
    </>
  );
}
