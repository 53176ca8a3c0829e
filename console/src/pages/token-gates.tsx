import './operations.css';
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Confirm, Empty, Field, FormProblem, GuardedButton, LoadError, Loading } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { type ApiProblem, toProblem } from '../lib/problems.js';
import { addressProblem, rawAmountProblem, toRaw, toTokens } from '../lib/tokens.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

interface Mint {
  found: boolean;
  decimals?: number;
  program?: string;
}

/** What the chain says of a mint, looked up once the address is well-formed (null while unknown). */
function useMint(orgSlug: string, mintAddress: string): { mint: Mint | null; note: string | null } {
  const [state, setState] = useState<{ mint: Mint | null; note: string | null }>({ mint: null, note: null });
  useEffect(() => {
    setState({ mint: null, note: null });
    if (!mintAddress || addressProblem(mintAddress)) return;
    let live = true;
    // Typing settles before asking: the lookup reaches the Solana RPC on a miss.
    const timer = setTimeout(() => {
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/token-gates/mint-info', {
          params: { path: { orgSlug }, query: { mintAddress } },
        }),
      )
        .then((m) => {
          if (live)
            setState({ mint: m, note: m.found ? null : 'The chain has no mint at this address (yet).' });
        })
        .catch((e: Error) => {
          if (live) setState({ mint: null, note: `The token's decimals are unknown: ${e.message}` });
        });
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [orgSlug, mintAddress]);
  return state;
}

/** "1500000 raw units = 1.5 tokens (6 decimals)" when the mint's decimals are known. */
function amountHint(raw: string, mint: Mint | null): string {
  const base = 'In raw units (the smallest unit of the token).';
  if (!mint?.found || mint.decimals === undefined || !raw || rawAmountProblem(raw)) return base;
  return `${base} ${raw} = ${toTokens(raw, mint.decimals)} tokens (this mint has ${mint.decimals} decimals).`;
}

/**
 * `minHoldings` in raw units, and, when the mint's decimals are known, the same amount in tokens:
 * typing either updates the other (exactly, as strings).
 */
function AmountFields({
  raw,
  onRaw,
  mint,
  problem,
}: {
  raw: string;
  onRaw: (raw: string) => void;
  mint: Mint | null;
  problem?: ApiProblem;
}) {
  const decimals = mint?.found ? mint.decimals : undefined;
  const [tokens, setTokens] = useState<string | null>(null);
  const shown =
    tokens ?? (decimals !== undefined && raw && !rawAmountProblem(raw) ? toTokens(raw, decimals) : '');
  const tokensError =
    tokens && decimals !== undefined && toRaw(tokens, decimals) === null
      ? `A number with at most ${decimals} decimals.`
      : null;
  return (
    <>
      <Field
        label="Minimum holdings"
        name="minHoldings"
        required
        inputMode="numeric"
        value={raw}
        hint={amountHint(raw, mint)}
        error={rawAmountProblem(raw)}
        problem={problem}
        onInput={(e) => {
          setTokens(null);
          onRaw((e.target as HTMLInputElement).value.trim());
        }}
      />
      {decimals !== undefined && (
        <Field
          label="Minimum holdings in tokens"
          name="minTokens"
          inputMode="decimal"
          value={shown}
          hint="Fills the raw amount above."
          error={tokensError}
          onInput={(e) => {
            const v = (e.target as HTMLInputElement).value.trim();
            setTokens(v);
            const r = toRaw(v, decimals);
            if (r !== null) onRaw(r);
          }}
        />
      )}
    </>
  );
}

function GateNav({ current }: { current: string }) {
  const { slug } = useOrg();
  return (
    <nav aria-label="Breadcrumb">
      <ul>
        <li>
          <a href={`/console/orgs/${slug}/token-gates`}>Token gates</a>
        </li>
        <li>
          <span aria-current="page">{current}</span>
        </li>
      </ul>
    </nav>
  );
}

export function TokenGates() {
  const o = useOrg();
  const path = { orgSlug: o.slug };
  const gates = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/token-gates', {
          params: { path, query: { limit: 100, offset: 0 } },
        }),
      ),
    [o.slug],
  );
  const deny = o.deny('org.tokenGates.edit');
  return (
    <>
      <hgroup>
        <h1>Token gates</h1>
        <p>
          A gate lets in the wallets that hold at least a minimum of one token. Anyone with a gate's id can
          check a wallet against it.
        </p>
      </hgroup>
      {gates.loading && !gates.data && <Loading what="token gates" />}
      {gates.error && <LoadError problem={gates.error} />}
      {gates.data &&
        (gates.data.items.length === 0 ? (
          <Empty>No token gates yet.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Mint</th>
                  <th scope="col">Minimum (raw units)</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {gates.data.items.map((g: Json) => (
                  <tr key={g.id}>
                    <th scope="row">
                      <a href={`/console/orgs/${o.slug}/token-gates/${g.id}`}>{g.name}</a>
                    </th>
                    <td>
                      <code class="break">{g.mintAddress}</code>
                    </td>
                    <td>{g.minHoldings}</td>
                    <td>{g.enabled ? 'Enabled' : 'Disabled'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <CreateGate deny={deny} onCreated={gates.reload} />
    </>
  );
}

function CreateGate({ deny, onCreated }: { deny: string | null; onCreated: () => Promise<void> }) {
  const o = useOrg();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [mintAddress, setMint] = useState('');
  const [minHoldings, setMin] = useState('1');
  const { mint, note } = useMint(o.slug, mintAddress);
  const create = useAction();
  const mintError = addressProblem(mintAddress);
  const amountError = rawAmountProblem(minHoldings);
  return (
    <>
      <h2>Create a token gate</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const gate = await create.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/token-gates', {
                params: { path: { orgSlug: o.slug } },
                body: { name, mintAddress, minHoldings, ...(description ? { description } : {}) },
              }),
            ),
          );
          if (gate) {
            await onCreated();
            route(`/console/orgs/${o.slug}/token-gates/${gate.id}`);
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <Field
            label="Name"
            name="name"
            required
            value={name}
            problem={create.problem}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Description"
            name="description"
            value={description}
            problem={create.problem}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Mint address"
            name="mintAddress"
            required
            autocomplete="off"
            spellcheck={false}
            value={mintAddress}
            hint={
              mint?.found
                ? `A ${mint.program === 'spl-token-2022' ? 'Token-2022' : 'SPL Token'} mint with ${mint.decimals} decimals.`
                : (note ?? 'The token mint, in base58. It cannot change later.')
            }
            error={mintError}
            problem={create.problem}
            onInput={(e) => setMint((e.target as HTMLInputElement).value.trim())}
          />
          <AmountFields raw={minHoldings} onRaw={setMin} mint={mint} problem={create.problem} />
        </fieldset>
        <FormProblem problem={create.problem} />
        <GuardedButton
          type="submit"
          denied={deny}
          disabled={!name || !mintAddress || Boolean(mintError) || Boolean(amountError) || create.busy}
          aria-busy={create.busy || undefined}
        >
          Create gate
        </GuardedButton>
      </form>
    </>
  );
}

export function TokenGateDetail() {
  const o = useOrg();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = { orgSlug: o.slug, gateId: params.gateId as string };
  const gate = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/token-gates/{gateId}', { params: { path } })),
    [o.slug, params.gateId],
  );
  const deny = o.deny('org.tokenGates.edit');
  const [confirming, setConfirming] = useState(false);
  const del = useAction();
  const toggle = useAction();
  if (gate.loading && !gate.data) return <Loading what="the token gate" />;
  if (gate.error) return <LoadError problem={gate.error} />;
  const g = gate.data as Json;
  return (
    <>
      <GateNav current={g.name} />
      <h1>{g.name}</h1>
      <p>
        Gate id <code>{g.id}</code> · {g.enabled ? 'Enabled' : 'Disabled: every check answers no access'}
      </p>
      <div class="actions">
        <GuardedButton
          type="button"
          class="secondary"
          denied={deny}
          aria-busy={toggle.busy || undefined}
          onClick={async () => {
            const ok = await toggle.run(() =>
              unwrap(
                api.PATCH('/identity/organizations/{orgSlug}/token-gates/{gateId}', {
                  params: { path },
                  body: { enabled: !g.enabled },
                }),
              ),
            );
            if (ok) await gate.reload();
          }}
        >
          {g.enabled ? 'Disable gate' : 'Enable gate'}
        </GuardedButton>
        <GuardedButton
          type="button"
          class="secondary outline"
          denied={deny}
          onClick={() => setConfirming(true)}
        >
          Delete gate
        </GuardedButton>
      </div>
      <FormProblem problem={toggle.problem} />
      <Confirm
        open={confirming}
        title={`Delete the gate ${g.name}?`}
        confirmLabel="Delete gate"
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirming(false)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(
              api.DELETE('/identity/organizations/{orgSlug}/token-gates/{gateId}', { params: { path } }),
            );
            return true;
          });
          if (ok) route(`/console/orgs/${o.slug}/token-gates`);
        }}
      >
        <p>Checks against it will answer 404. Pages that use its id stop letting anyone in.</p>
      </Confirm>
      <EditGate key={g.updatedAt} gate={g} deny={deny} onSaved={gate.reload} />
      <CheckTester gate={g} />
    </>
  );
}

function EditGate({
  gate,
  deny,
  onSaved,
}: {
  gate: Json;
  deny: string | null;
  onSaved: () => Promise<void>;
}) {
  const o = useOrg();
  const [name, setName] = useState<string>(gate.name);
  const [description, setDescription] = useState<string>(gate.description ?? '');
  const [minHoldings, setMin] = useState<string>(gate.minHoldings);
  const { mint } = useMint(o.slug, gate.mintAddress);
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const amountError = rawAmountProblem(minHoldings);
  return (
    <section>
      <h2>Settings</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const ok = await save.run(() =>
            unwrap(
              api.PATCH('/identity/organizations/{orgSlug}/token-gates/{gateId}', {
                params: { path: { orgSlug: o.slug, gateId: gate.id } },
                body: { name, description: description || null, minHoldings },
              }),
            ),
          );
          if (ok) {
            setSaved(true);
            await onSaved();
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <Field
            label="Name"
            name="name"
            required
            value={name}
            problem={save.problem}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Description"
            name="description"
            value={description}
            problem={save.problem}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
          />
          <p>
            Mint <code class="break">{gate.mintAddress}</code>
            {mint?.found && ` (${mint.decimals} decimals)`}
          </p>
          <AmountFields raw={minHoldings} onRaw={setMin} mint={mint} problem={save.problem} />
        </fieldset>
        <FormProblem problem={save.problem} />
        <GuardedButton type="submit" denied={deny} disabled={Boolean(amountError) || !name}>
          Save gate
        </GuardedButton>
        {saved && <p role="status">Saved.</p>}
      </form>
    </section>
  );
}

interface CheckOutcome {
  hasAccess: boolean;
  balance: string | null;
  reason: string | null;
  age: number | null;
  refreshed: boolean;
}

const REASONS: Record<string, string> = {
  insufficientBalance: 'The wallet holds less than the minimum.',
  gateDisabled: 'The gate is disabled.',
  walletNotFound: 'The chain does not know this wallet.',
};

/** The public check, as a page would call it; "refresh" skips the cached balance. */
function CheckTester({ gate }: { gate: Json }) {
  const o = useOrg();
  const [wallet, setWallet] = useState('');
  const [outcome, setOutcome] = useState<CheckOutcome>();
  const check = useAction();
  const { mint } = useMint(o.slug, gate.mintAddress);
  const walletError = addressProblem(wallet);
  const run = (refresh: boolean) =>
    check.run(async () => {
      const r = await api.GET('/identity/organizations/{orgSlug}/token-gates/{gateId}/check', {
        params: {
          path: { orgSlug: o.slug, gateId: gate.id },
          query: { walletAddress: wallet, ...(refresh ? { refresh: 'true' as const } : {}) },
        },
      });
      if (!r.response.ok) throw toProblem(r.response.status, r.error);
      const age = r.response.headers.get('age');
      setOutcome({ ...(r.data as Json), age: age === null ? null : Number(age), refreshed: refresh });
    });
  const balance =
    outcome?.balance != null && mint?.found && mint.decimals !== undefined
      ? `${outcome.balance} raw units (${toTokens(outcome.balance, mint.decimals)} tokens)`
      : outcome?.balance != null
        ? `${outcome.balance} raw units`
        : 'unknown';
  return (
    <section>
      <h2>Check a wallet</h2>
      <p>The public check any page can call, with the same answers and cache.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(false);
        }}
      >
        <Field
          label="Wallet address"
          name="walletAddress"
          autocomplete="off"
          spellcheck={false}
          value={wallet}
          error={walletError}
          problem={check.problem}
          onInput={(e) => setWallet((e.target as HTMLInputElement).value.trim())}
        />
        <div class="actions">
          <button
            type="submit"
            disabled={!wallet || Boolean(walletError)}
            aria-busy={check.busy || undefined}
          >
            Check
          </button>
          <button
            type="button"
            class="secondary"
            disabled={!wallet || Boolean(walletError)}
            onClick={() => void run(true)}
          >
            Refresh from the chain
          </button>
        </div>
      </form>
      <FormProblem problem={check.problem} />
      {outcome && (
        <article aria-live="polite" aria-label="Check result" class="result">
          <p>
            <strong>{outcome.hasAccess ? 'Access granted' : 'No access'}</strong>
          </p>
          <dl>
            <dt>Balance</dt>
            <dd>{balance}</dd>
            <dt>Reason</dt>
            <dd>{outcome.reason ? `${outcome.reason}: ${REASONS[outcome.reason] ?? ''}` : 'none'}</dd>
            <dt>Cache</dt>
            <dd>
              {outcome.age !== null
                ? `Answered from the cache, ${outcome.age} s old.`
                : outcome.refreshed
                  ? 'Fresh from the chain (refresh).'
                  : 'Fresh from the chain.'}
            </dd>
          </dl>
        </article>
      )}
    </section>
  );
}
