import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Confirm, Empty, FormProblem, LoadError, Loading } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { METHOD_LABELS, PROVIDER_TYPES } from '../lib/providers.js';
import { ApiProblem } from '../lib/problems.js';
import {
  type ConnectedWallet,
  type PageWallet,
  pageWallets,
  shortAddress,
  signChallenge,
} from '../lib/wallets.js';
import { AccountNav, when } from './account.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** The wallets in the page, kept up to date as Wallet Standard wallets register. */
function usePageWallets(): PageWallet[] {
  const [wallets, setWallets] = useState<PageWallet[]>([]);
  useEffect(() => {
    const refresh = () => setWallets(pageWallets().wallets);
    const { wallets: now, stop } = pageWallets(refresh);
    setWallets(now);
    return stop;
  }, []);
  return wallets;
}

/** A fresh proof by `wallet` over a link challenge for its own address. */
async function proveWith(wallet: ConnectedWallet) {
  const challenge = await unwrap(
    api.POST('/users/me/wallet-challenge', { body: { address: wallet.address } }),
  );
  return signChallenge(wallet, challenge.message);
}

const walletFailure = (e: unknown) =>
  e instanceof ApiProblem
    ? e
    : new ApiProblem(0, 'wallet', (e as Error)?.message ?? 'The wallet refused.', {}, [], {});

export function SignInMethods() {
  const keys = useLoad(() => unwrap(api.GET('/users/me/public-keys', {})), []);
  const providers = useLoad(() => unwrap(api.GET('/users/me/authentication-providers', {})), []);
  const wallets = usePageWallets();
  return (
    <>
      <AccountNav />
      <hgroup>
        <h1>Wallets and sign-in</h1>
        <p>Every wallet and account linked here signs in to this account.</p>
      </hgroup>
      <section aria-labelledby="wallets-h">
        <h2 id="wallets-h">Wallets</h2>
        {keys.loading && !keys.data && <Loading what="your wallets" />}
        {keys.error && <LoadError problem={keys.error} />}
        {keys.data && <WalletTable keys={keys.data} wallets={wallets} onChange={keys.reload} />}
        <LinkWallet wallets={wallets} onLinked={keys.reload} />
      </section>
      <section aria-labelledby="providers-h">
        <h2 id="providers-h">Linked sign-in accounts</h2>
        {providers.error && <LoadError problem={providers.error} />}
        {providers.data && (
          <Providers
            linked={providers.data.filter((p: Json) => p.type === 'oauth')}
            onChange={providers.reload}
          />
        )}
      </section>
    </>
  );
}

function WalletTable({
  keys,
  wallets,
  onChange,
}: {
  keys: Json[];
  wallets: PageWallet[];
  onChange: () => void;
}) {
  const [removing, setRemoving] = useState<Json | null>(null);
  const remove = useAction();
  const update = useAction();
  if (keys.length === 0) return <Empty>No wallet is linked.</Empty>;
  return (
    <>
      <div class="table-wrap">
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Wallet</th>
              <th scope="col">Label</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  <code title={k.address}>{shortAddress(k.address)}</code>
                  {k.isPrimary && <span class="badge"> Primary</span>}
                </th>
                <td data-label="Label">
                  <form
                    class="row"
                    onSubmit={async (e) => {
                      e.preventDefault();
                      const label = String(
                        new FormData(e.target as HTMLFormElement).get('label') ?? '',
                      ).trim();
                      const ok = await update.run(() =>
                        unwrap(
                          api.PATCH('/users/me/public-keys/{id}', {
                            params: { path: { id: k.id } },
                            body: { label: label || null },
                          }),
                        ),
                      );
                      if (ok) onChange();
                    }}
                  >
                    <input
                      name="label"
                      aria-label={`Label of ${shortAddress(k.address)}`}
                      maxLength={80}
                      defaultValue={k.label ?? ''}
                    />
                    <button
                      type="submit"
                      class="secondary"
                      aria-label={`Save the label of ${shortAddress(k.address)}`}
                    >
                      Save
                    </button>
                  </form>
                </td>
                <td data-label="Last used">{when(k.lastUsedAt)}</td>
                <td data-label="Actions">
                  <div class="row">
                    {!k.isPrimary && (
                      <button
                        type="button"
                        class="secondary outline"
                        aria-label={`Make primary: ${shortAddress(k.address)}`}
                        onClick={async () => {
                          const ok = await update.run(() =>
                            unwrap(
                              api.PATCH('/users/me/public-keys/{id}', {
                                params: { path: { id: k.id } },
                                body: { isPrimary: true },
                              }),
                            ),
                          );
                          if (ok) onChange();
                        }}
                      >
                        Make primary
                      </button>
                    )}
                    <button
                      type="button"
                      class="secondary outline"
                      aria-label={`Remove ${shortAddress(k.address)}`}
                      onClick={() => {
                        remove.clear();
                        setRemoving(k);
                      }}
                    >
                      Remove
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <FormProblem problem={update.problem} />
      <Confirm
        open={removing !== null}
        title={`Remove the wallet ${removing ? shortAddress(removing.address) : ''}?`}
        confirmLabel="Remove"
        busy={remove.busy}
        problem={remove.problem}
        onCancel={() => setRemoving(null)}
        onConfirm={() => undefined}
        actions={wallets.map((w) => (
          <button
            key={w.name}
            type="button"
            class="danger"
            disabled={remove.busy}
            onClick={async () => {
              const ok = await remove.run(async () => {
                let connected: ConnectedWallet;
                try {
                  connected = await w.connect();
                } catch (e) {
                  throw walletFailure(e);
                }
                if (connected.address !== removing.address)
                  throw walletFailure(
                    new Error(
                      `${w.name} is on ${shortAddress(connected.address)}. Switch it to ${shortAddress(removing.address)} and try again.`,
                    ),
                  );
                const proof = await proveWith(connected).catch((e) => {
                  throw walletFailure(e);
                });
                await unwrap(
                  api.DELETE('/users/me/public-keys/{id}', {
                    params: { path: { id: removing.id } },
                    body: proof,
                  }),
                );
                return true;
              });
              if (ok) {
                setRemoving(null);
                onChange();
              }
            }}
          >
            Sign with {w.name} and remove
          </button>
        ))}
      >
        <p>
          To prove the wallet is still yours, it signs a fresh message; nothing is sent on chain. The last way
          to sign in to the account cannot be removed.
        </p>
        {removing?.isPrimary && (
          <p>It is your primary wallet: the oldest remaining wallet becomes primary.</p>
        )}
        {wallets.length === 0 && (
          <p role="alert">No wallet was found in this browser. Install or unlock one.</p>
        )}
      </Confirm>
    </>
  );
}

/** Links a wallet of the page: a challenge for its address, signed by it; `force` when another account has it. */
function LinkWallet({ wallets, onLinked }: { wallets: PageWallet[]; onLinked: () => void }) {
  const link = useAction();
  const [label, setLabel] = useState('');
  const [inUse, setInUse] = useState<{ body: Json } | null>(null);
  const [linked, setLinked] = useState<string | null>(null);
  const send = async (body: Json) => {
    const key = await link.run(() => unwrap(api.POST('/users/me/public-keys', { body })));
    if (key) {
      setInUse(null);
      setLabel('');
      setLinked(`Linked ${shortAddress(key.address)}.`);
      onLinked();
    } else setLinked(null);
    return key;
  };
  return (
    <>
      <h3>Link a wallet</h3>
      {wallets.length === 0 ? (
        <Empty>No wallet was found in this browser. Install or unlock a Solana wallet to link it.</Empty>
      ) : (
        <>
          <label>
            Label (optional)
            <input
              name="walletLabel"
              maxLength={80}
              value={label}
              onInput={(e) => setLabel((e.target as HTMLInputElement).value)}
            />
          </label>
          <div class="row">
            {wallets.map((w) => (
              <button
                key={w.name}
                type="button"
                class="secondary"
                disabled={link.busy}
                onClick={async () => {
                  setInUse(null);
                  let body: Json;
                  try {
                    const connected = await w.connect();
                    const proof = await proveWith(connected);
                    body = {
                      blockchain: 'solana',
                      address: connected.address,
                      ...proof,
                      ...(label.trim() ? { label: label.trim() } : {}),
                    };
                  } catch (e) {
                    await link.run(async () => {
                      throw walletFailure(e);
                    });
                    return;
                  }
                  const key = await send(body);
                  if (!key) setInUse((prev) => prev ?? { body });
                }}
              >
                {w.icon && <img src={w.icon} alt="" width={20} height={20} />} Link with {w.name}
              </button>
            ))}
          </div>
        </>
      )}
      {link.problem?.code === 'wallet_in_use' && inUse ? (
        <div role="alert" class="callout">
          <p>
            <strong>This wallet is linked to another account.</strong> Moving it here (<code>force</code>)
            removes it from that account: whoever signs in with it afterwards reaches this account. The
            wallet's signature proves you control it, and you must have signed in here within the last 10
            minutes.
          </p>
          <button
            type="button"
            class="danger"
            disabled={link.busy}
            onClick={() => void send({ ...inUse.body, force: true })}
          >
            Move the wallet to this account
          </button>
        </div>
      ) : link.problem?.missing.includes('recent_sign_in') ? (
        <p role="alert" class="form-error">
          Moving a wallet from another account needs a sign-in within the last 10 minutes: sign out, sign in
          again and link it once more.
        </p>
      ) : (
        <FormProblem problem={link.problem} />
      )}
      {linked && <p role="status">{linked}</p>}
    </>
  );
}

function Providers({ linked, onChange }: { linked: Json[]; onChange: () => void }) {
  const [type, setType] = useState<string>(PROVIDER_TYPES[0]);
  const start = useAction();
  const unlink = useAction();
  useEffect(() => {
    // A link completes in another tab: look again when the user comes back.
    const again = () => document.visibilityState === 'visible' && onChange();
    document.addEventListener('visibilitychange', again);
    return () => document.removeEventListener('visibilitychange', again);
  }, [onChange]);
  return (
    <>
      {linked.length === 0 ? (
        <Empty>No Google, Apple, Discord or other account is linked.</Empty>
      ) : (
        <ul>
          {linked.map((p) => (
            <li key={p.id} class="row">
              <span>
                {METHOD_LABELS[p.provider]?.replace('Continue with ', '') ?? p.provider}
                {p.emailAddress || p.username ? ` — ${p.emailAddress ?? p.username}` : ''}
              </span>
              <button
                type="button"
                class="secondary outline"
                disabled={unlink.busy}
                aria-label={`Unlink ${p.provider}`}
                onClick={async () => {
                  const ok = await unlink.run(async () => {
                    await unwrap(
                      api.DELETE('/users/me/oauth-tokens/{id}', { params: { path: { id: p.id } } }),
                    );
                    return true;
                  });
                  if (ok) onChange();
                }}
              >
                Unlink
              </button>
            </li>
          ))}
        </ul>
      )}
      <FormProblem problem={unlink.problem} />
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          // Opened now, filled once the URL is known: a window opened after an await is blocked.
          const tab = window.open('', '_blank');
          const r = await start.run(() =>
            unwrap(
              api.POST('/users/me/authentication-providers/{type}/link', {
                params: { path: { type: type as never } },
              }),
            ),
          );
          if (r && tab) tab.location.href = r.authorizationUrl;
          else if (r) window.location.assign(r.authorizationUrl);
          else tab?.close();
        }}
      >
        <label>
          Provider
          <select
            name="provider"
            value={type}
            onChange={(e) => setType((e.target as HTMLSelectElement).value)}
          >
            {PROVIDER_TYPES.map((p) => (
              <option key={p} value={p}>
                {METHOD_LABELS[p].replace('Continue with ', '')}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary" aria-busy={start.busy || undefined}>
          Link account
        </button>
      </form>
      <FormProblem problem={start.problem} />
    </>
  );
}
