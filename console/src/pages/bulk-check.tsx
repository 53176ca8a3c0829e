import './operations.css';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { GateTabs } from '../components/gate-tabs.js';
import { CopyButton, Empty, Field, FormProblem, LoadError, Loading } from '../components/ui.js';
import { AttestBox } from '../components/wallet-check.js';
import { useAction } from '../hooks.js';
import { amountInUnit, kindLabel } from '../lib/gate-kinds.js';
import { parseWallets } from '../lib/gate-rules.js';
import { ApiProblem, toProblem } from '../lib/problems.js';
import { addressProblem } from '../lib/tokens.js';
import { useOrg } from '../session.js';
import { useGates } from './gate-data.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

/** DESIGN §3: a bulk check takes 1–100 wallets and 1–20 gates. */
const MAX_WALLETS = 100;
const MAX_GATES = 20;

/** What is wrong with the pasted wallets, naming the first bad line, or null. */
function walletsProblem(wallets: string[]): string | null {
  if (wallets.length > MAX_WALLETS) return `At most ${MAX_WALLETS} wallets: this list has ${wallets.length}.`;
  const bad = wallets.findIndex((w) => addressProblem(w));
  if (bad < 0) return null;
  return `Wallet ${bad + 1} (${wallets[bad]}): ${addressProblem(wallets[bad] as string)}`;
}

/** A 429 in words: the per-IP budget of wallet × gate pairs, what this check needed, when to retry. */
function budgetProblem(res: Response, body: unknown, pairs: number): ApiProblem {
  const p = toProblem(res.status, body);
  if (res.status !== 429) return p;
  const limit = res.headers.get('ratelimit-limit');
  const retry = res.headers.get('retry-after');
  const message =
    `The bulk check budget is spent: each IP may check ${limit ? `${limit} ` : 'a limited number of '}` +
    `wallet × gate pairs a minute, and this check needs ${pairs}.` +
    (retry ? ` Try again in ${retry} seconds.` : ' Try again in a minute.');
  return new ApiProblem(429, p.code, message, p.fields, p.missing, p.details);
}

interface BulkResult {
  wallets: string[];
  gateIds: string[];
  rows: Json[];
}

export function BulkCheck() {
  const o = useOrg();
  const gates = useGates();
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const [result, setResult] = useState<BulkResult>();
  const [attest, setAttest] = useState(false);
  const check = useAction();
  const wallets = parseWallets(text);
  const problem = walletsProblem(wallets);
  const all = gates.data ?? [];
  const gateIds = picked.filter((id) => all.some((g) => g.id === id));
  const pairs = wallets.length * gateIds.length;
  return (
    <>
      <GateTabs current="bulk" />
      <hgroup>
        <h1>Bulk check</h1>
        <p>
          The public bulk check: up to {MAX_WALLETS} wallets against up to {MAX_GATES} gates in one request,
          with the answers in the order given. Each IP may check a budget of wallet × gate pairs a minute.
        </p>
      </hgroup>
      {gates.loading && !gates.data && <Loading what="token gates" />}
      {gates.error && <LoadError problem={gates.error} />}
      {gates.data && all.length === 0 && <Empty>No token gates yet.</Empty>}
      {all.length > 0 && (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            await check.run(async () => {
              const r = await api.POST('/identity/organizations/{orgSlug}/token-gates/check', {
                params: { path: { orgSlug: o.slug }, query: attest ? { attest: 'true' } : {} },
                body: { walletAddresses: wallets, gateIds },
              });
              if (!r.response.ok) throw budgetProblem(r.response, r.error, pairs);
              setResult({ wallets, gateIds, rows: (r.data as Json).results });
            });
          }}
        >
          <Field
            label="Wallet addresses"
            name="walletAddresses"
            multiline
            rows={6}
            spellcheck={false}
            autocomplete="off"
            value={text}
            hint={`One per line (commas and spaces separate too), at most ${MAX_WALLETS}; duplicates are kept. ${wallets.length} wallet${wallets.length === 1 ? '' : 's'}.`}
            error={problem}
            problem={check.problem}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
          <fieldset>
            <legend>Gates (at most {MAX_GATES})</legend>
            <div class="event-list">
              {all.map((g) => {
                const on = picked.includes(g.id);
                return (
                  <label key={g.id}>
                    <input
                      type="checkbox"
                      name="gateIds"
                      checked={on}
                      disabled={!on && picked.length >= MAX_GATES}
                      onChange={() => setPicked(on ? picked.filter((x) => x !== g.id) : [...picked, g.id])}
                    />
                    {g.name} ({kindLabel(g.kind)})
                  </label>
                );
              })}
            </div>
          </fieldset>
          <AttestBox checked={attest} onChange={setAttest} />
          <FormProblem problem={check.problem} />
          <button
            type="submit"
            disabled={wallets.length === 0 || gateIds.length === 0 || Boolean(problem) || check.busy}
            aria-busy={check.busy || undefined}
          >
            Check {pairs} pair{pairs === 1 ? '' : 's'}
          </button>
        </form>
      )}
      {result && <ResultTable result={result} gates={all} />}
    </>
  );
}

/** Wallets down, gates across, in the order asked (wallet-major, duplicates kept). */
function ResultTable({ result, gates }: { result: BulkResult; gates: Json[] }) {
  const gate = (id: string) => gates.find((g) => g.id === id);
  const m = result.gateIds.length;
  const passing = result.rows.filter((r) => r.hasAccess).length;
  return (
    <section aria-live="polite">
      <h2>Results</h2>
      <p>
        {passing} of {result.rows.length} pairs pass.
      </p>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Bulk check results, wallets in the order given</caption>
          <thead>
            <tr>
              <th scope="col">Wallet</th>
              {result.gateIds.map((id) => (
                <th scope="col" key={id}>
                  {gate(id)?.name ?? id}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.wallets.map((w, i) => (
              <tr key={i}>
                <th scope="row">
                  <code class="break">{w}</code>
                </th>
                {result.rows.slice(i * m, (i + 1) * m).map((r, j) => (
                  <td key={j}>
                    {r.hasAccess ? 'Passes' : 'Fails'}
                    <br />
                    <small>
                      {r.balance == null ? 'balance unknown' : amountInUnit(gate(r.gateId)?.kind, r.balance)}
                      {r.reason ? ` · ${r.reason}` : ''}
                    </small>
                    {r.attestation && (
                      <>
                        <br />
                        <CopyButton
                          text={r.attestation}
                          label="Copy JWS"
                          more={`of wallet ${i + 1} for ${gate(r.gateId)?.name ?? r.gateId}`}
                        />
                      </>
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
