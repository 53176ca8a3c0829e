/** What deleting the account does, at once and after the grace window (DESIGN.md §4). */
export function GraceExplanation() {
  return (
    <>
      <p>Deleting your account happens in two steps:</p>
      <ol>
        <li>
          <strong>At once:</strong> you are signed out everywhere; the tokens apps hold for you stop working;
          your wallets, linked sign-in accounts and API keys are removed (the wallets can then be linked to
          another account). Your username stays reserved.
        </li>
        <li>
          <strong>After a 30-day grace window:</strong> the account is deleted for good and the username is
          released. Until then, signing in with one of its wallets or linked accounts restores the same
          account.
        </li>
      </ol>
      <p>
        Organizations you own are not deleted: transfer or delete them first if nobody else should run them.
      </p>
    </>
  );
}

/** Shown after the deletion, without a session. */
export function AccountDeleted() {
  return (
    <main id="main" class="container narrow">
      <h1>Your account is scheduled for deletion</h1>
      <GraceExplanation />
      <p>
        Changed your mind? <a href="/console/">Sign in again</a> within 30 days with one of its wallets or
        linked accounts.
      </p>
    </main>
  );
}
