import './operations.css';
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Attestation } from '../components/attestation.js';
import { DeleteWithConfirm, Listing, NameFields } from '../components/gate-forms.js';
import { GateTabs } from '../components/gate-tabs.js';
import { checkQuery, WalletCheckForm } from '../components/wallet-check.js';
import { Field, FormProblem, GuardedButton, LoadError, Loading, SelectField } from '../components/ui.js';
import { type Loaded, useAction, useLoad } from '../hooks.js';
import {
  amountInUnit,
  type GateKind,
  KINDS,
  kindLabel,
  reasonText,
  SOL_DECIMALS,
  SOL_MINT,
} from '../lib/gate-kinds.js';
import { type GateRule, ruleGates } from '../lib/gate-rules.js';
import { type ApiProblem, toProblem } from '../lib/problems.js';
import { addressProblem, rawAmountProblem, toRaw, toTokens } from '../lib/tokens.js';
import { shortAddress } from '../lib/wallets.js';
import { usePolicies } from './gate-data.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

interface Mint {
  found: boolean;
  decimals?: number;
  program?: string;
}

const SOL: Mint = { found: true, decimals: SOL_DECIMALS };

/**
 * What the chain says of a token gate's mint, looked up once the address is well-formed (null while
 * unknown). A `sol` gate's unit is the lamport; a collection's is the NFT (no lookup for either).
 */
function useMint(
  orgSlug: string,
  mintAddress: string,
  kind: GateKind = 'token',
): { mint: Mint | null; note: string | null } {
  const [state, setState] = useState<{ mint: Mint | null; note: string | null }>({ mint: null, note: null });
  useEffect(() => {
    setState({ mint: kind === 'sol' ? SOL : null, note: null });
    if (kind !== 'token' || !mintAddress || addressProblem(mintAddress)) return;
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
  }, [orgSlug, mintAddress, kind]);
  return state;
}

/** "1500000 raw units = 1.5 tokens (6 decimals)" when the mint's decimals are known. */
function amountHint(raw: string, mint: Mint | null, kind: GateKind): string {
  if (kind === 'collection') return 'The number of the collection’s NFTs a wallet must hold.';
  if (kind === 'sol')
    return `In lamports (1 SOL = 1000000000 lamports).${raw && !rawAmountProblem(raw) ? ` ${amountInUnit('sol', raw)}.` : ''}`;
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
  kind,
  problem,
}: {
  raw: string;
  onRaw: (raw: string) => void;
  mint: Mint | null;
  kind: GateKind;
  problem?: ApiProblem;
}) {
  const decimals = mint?.found && kind !== 'collection' ? mint.decimals : undefined;
  const unit = kind === 'sol' ? 'SOL' : 'tokens';
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
        hint={amountHint(raw, mint, kind)}
        error={rawAmountProblem(raw)}
        problem={problem}
        onInput={(e) => {
          setTokens(null);
          onRaw((e.target as HTMLInputElement).value.trim());
        }}
      />
      {decimals !== undefined && (
        <Field
          label={`Minimum holdings in ${unit}`}
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
      <GateTabs current="gates" />
      <hgroup>
        <h1>Token gates</h1>
        <p>
          A gate lets in the wallets that hold at least a minimum of one token, of a collection's NFTs or of
          SOL. Anyone with a gate's id can check a wallet against it.
        </p>
      </hgroup>
      <Listing
        loaded={gates as Loaded<{ items: Json[] }>}
        what="token gates"
        empty="No token gates yet."
        href={(g) => `/console/orgs/${o.slug}/token-gates/${g.id}`}
        columns={[
          ['Kind', (g) => kindLabel(g.kind)],
          ['Mint', (g) => <code title={g.mintAddress}>{shortAddress(g.mintAddress)}</code>],
          ['Minimum', (g) => amountInUnit(g.kind, g.minHoldings)],
          ['State', (g) => (g.enabled ? 'Enabled' : 'Disabled')],
        ]}
      />
      <CreateGate deny={deny} onCreated={gates.reload} />
    </>
  );
}

function mintHint(kind: GateKind, mint: Mint | null, note: string | null): string {
  if (kind === 'sol') return 'Native SOL, and wrapped SOL by this mint: fixed for a SOL gate.';
  if (kind === 'collection')
    return 'The mint of the Metaplex collection (its verified collection NFT), in base58. It cannot change later.';
  if (mint?.found)
    return `A ${mint.program === 'spl-token-2022' ? 'Token-2022' : 'SPL Token'} mint with ${mint.decimals} decimals.`;
  return note ?? 'The token mint, in base58. It cannot change later.';
}

function CreateGate({ deny, onCreated }: { deny: string | null; onCreated: () => Promise<void> }) {
  const o = useOrg();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [kind, setKind] = useState<GateKind>('token');
  const [typedMint, setMint] = useState('');
  const mintAddress = kind === 'sol' ? SOL_MINT : typedMint;
  const [minHoldings, setMin] = useState('1');
  const { mint, note } = useMint(o.slug, mintAddress, kind);
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
                body: { name, kind, mintAddress, minHoldings, ...(description ? { description } : {}) },
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
          <NameFields
            name={name}
            description={description}
            onName={setName}
            onDescription={setDescription}
            problem={create.problem}
          />
          <SelectField
            label="Kind"
            name="kind"
            value={kind}
            hint={`${KINDS.find((k) => k.kind === kind)?.hint} It cannot change later.`}
            problem={create.problem}
            onChange={(v) => setKind(v as GateKind)}
          >
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </SelectField>
          <Field
            label={kind === 'collection' ? 'Collection mint address' : 'Mint address'}
            name="mintAddress"
            required
            readOnly={kind === 'sol'}
            autocomplete="off"
            spellcheck={false}
            value={mintAddress}
            hint={mintHint(kind, mint, note)}
            error={mintError}
            problem={create.problem}
            onInput={(e) => setMint((e.target as HTMLInputElement).value.trim())}
          />
          <AmountFields raw={minHoldings} onRaw={setMin} mint={mint} kind={kind} problem={create.problem} />
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
        <DeleteWithConfirm
          what="gate"
          title={`Delete the gate ${g.name}?`}
          deny={deny}
          remove={() =>
            unwrap(api.DELETE('/identity/organizations/{orgSlug}/token-gates/{gateId}', { params: { path } }))
          }
          onDeleted={() => route(`/console/orgs/${o.slug}/token-gates`)}
          inUse={() => <InUse gateId={g.id} />}
        >
          <p>Checks against it will answer 404. Pages that use its id stop letting anyone in.</p>
        </DeleteWithConfirm>
      </div>
      <FormProblem problem={toggle.problem} />
      <EditGate key={g.updatedAt} gate={g} deny={deny} onSaved={gate.reload} />
      <CheckTester gate={g} />
    </>
  );
}

/** Why a gate cannot be deleted (409): the policies whose rules name it, by name, with links. */
function InUse({ gateId }: { gateId: string }) {
  const o = useOrg();
  const policies = usePolicies();
  const using = (policies.data?.items ?? []).filter((p: Json) =>
    ruleGates(p.rule as GateRule).includes(gateId),
  );
  return (
    <div role="alert">
      <p class="form-error">
        This gate is in use: a gate policy's rule names it. Take it out of these rules (or delete them) first.
      </p>
      {using.length > 0 && (
        <ul>
          {using.map((p: Json) => (
            <li key={p.id}>
              <a href={`/console/orgs/${o.slug}/token-gates/policies/${p.id}`}>{p.name}</a>
            </li>
          ))}
        </ul>
      )}
    </div>
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
  const kind: GateKind = gate.kind ?? 'token';
  const { mint } = useMint(o.slug, gate.mintAddress, kind);
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
          <NameFields
            name={name}
            description={description}
            onName={setName}
            onDescription={setDescription}
            problem={save.problem}
          />
          <dl class="fixed">
            <dt>Kind</dt>
            <dd>
              {kindLabel(kind)} <small>(set at creation)</small>
            </dd>
            <dt>{kind === 'collection' ? 'Collection mint' : 'Mint'}</dt>
            <dd>
              <code class="break">{gate.mintAddress}</code>
              {kind === 'token' && mint?.found && ` (${mint.decimals} decimals)`}
            </dd>
          </dl>
          <AmountFields raw={minHoldings} onRaw={setMin} mint={mint} kind={kind} problem={save.problem} />
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
  attestation?: string;
}

/** The public check, as a page would call it; "refresh" skips the cached balance. */
function CheckTester({ gate }: { gate: Json }) {
  const o = useOrg();
  const [outcome, setOutcome] = useState<CheckOutcome>();
  const check = useAction();
  const { mint } = useMint(o.slug, gate.mintAddress, gate.kind);
  const run = (wallet: string, refresh: boolean, attest: boolean) =>
    check.run(async () => {
      const r = await api.GET('/identity/organizations/{orgSlug}/token-gates/{gateId}/check', {
        params: {
          path: { orgSlug: o.slug, gateId: gate.id },
          query: checkQuery(wallet, refresh, attest),
        },
      });
      if (!r.response.ok) throw toProblem(r.response.status, r.error);
      const age = r.response.headers.get('age');
      setOutcome({ ...(r.data as Json), age: age === null ? null : Number(age), refreshed: refresh });
    });
  const balance =
    outcome?.balance != null
      ? amountInUnit(gate.kind, outcome.balance, mint?.found ? mint.decimals : undefined)
      : 'unknown';
  return (
    <section>
      <h2>Check a wallet</h2>
      <p>The public check any page can call, with the same answers and cache.</p>
      <WalletCheckForm check={check} onCheck={run} />
      {outcome && (
        <article aria-live="polite" aria-label="Check result" class="result">
          <p>
            <strong>{outcome.hasAccess ? 'Access granted' : 'No access'}</strong>
          </p>
          <dl>
            <dt>Balance</dt>
            <dd>{balance}</dd>
            <dt>Reason</dt>
            <dd>{reasonText(outcome.reason)}</dd>
            <dt>Cache</dt>
            <dd>
              {outcome.age !== null
                ? `Answered from the cache, ${outcome.age} s old.`
                : outcome.refreshed
                  ? 'Fresh from the chain (refresh).'
                  : 'Fresh from the chain.'}
            </dd>
          </dl>
          {outcome.attestation && <Attestation jws={outcome.attestation} />}
        </article>
      )}
    </section>
  );
}
