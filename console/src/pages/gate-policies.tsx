import './operations.css';
import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Attestation } from '../components/attestation.js';
import { DeleteWithConfirm, Listing, NameFields } from '../components/gate-forms.js';
import { GateTabs } from '../components/gate-tabs.js';
import { type GateOption, RuleBuilder } from '../components/rule-builder.js';
import { checkQuery, WalletCheckForm } from '../components/wallet-check.js';
import { Empty, FormProblem, GuardedButton, LoadError, Loading } from '../components/ui.js';
import { type Loaded, useAction, useLoad } from '../hooks.js';
import { amountInUnit, kindLabel, reasonText } from '../lib/gate-kinds.js';
import {
  describeRule,
  type GateRule,
  leaf,
  type RuleNode,
  ruleProblems,
  toNode,
  toRule,
} from '../lib/gate-rules.js';
import { toProblem } from '../lib/problems.js';
import { nameOf, useGates, usePolicies } from './gate-data.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

export function GatePolicies() {
  const o = useOrg();
  const policies = usePolicies();
  const gates = useGates();
  const { route } = useLocation();
  const deny = o.deny('org.tokenGates.edit');
  return (
    <>
      <GateTabs current="policies" />
      <hgroup>
        <h1>Gate policies</h1>
        <p>
          A policy combines gates: all of them, any of them, at least N of them, or not one, nested up to five
          levels. Anyone with a policy's id can check a wallet against it; scopes and apps can require it.
        </p>
      </hgroup>
      <Listing
        loaded={policies as Loaded<{ items: Json[] }>}
        what="gate policies"
        empty="No gate policies yet."
        href={(p) => `/console/orgs/${o.slug}/token-gates/policies/${p.id}`}
        columns={[['Rule', (p) => describeRule(p.rule as GateRule, nameOf(gates.data))]]}
      />
      <section>
        <h2>Create a gate policy</h2>
        {gates.error && <LoadError problem={gates.error} />}
        {gates.data &&
          (gates.data.length === 0 ? (
            <Empty>
              A policy's rule names gates: <a href={`/console/orgs/${o.slug}/token-gates`}>create a gate</a>{' '}
              first.
            </Empty>
          ) : (
            <PolicyForm
              gates={gates.data}
              deny={deny}
              submitLabel="Create policy"
              initial={{ name: '', description: '', rule: leaf() }}
              send={(body) =>
                unwrap(
                  api.POST('/identity/organizations/{orgSlug}/gate-policies', {
                    params: { path: { orgSlug: o.slug } },
                    body: {
                      name: body.name,
                      rule: body.rule as Json,
                      ...(body.description ? { description: body.description } : {}),
                    },
                  }),
                )
              }
              onDone={async (p: Json) => {
                await policies.reload();
                route(`/console/orgs/${o.slug}/token-gates/policies/${p.id}`);
              }}
            />
          ))}
      </section>
    </>
  );
}

interface PolicyDraft {
  name: string;
  description: string;
  rule: RuleNode;
}

/**
 * Create and edit: name, description and the rule builder. The builder's own problems (a part
 * without a gate, N out of range) show at their parts on the first save; the API's at their fields.
 */
function PolicyForm(props: {
  gates: GateOption[];
  deny: string | null;
  submitLabel: string;
  initial: PolicyDraft;
  send: (body: { name: string; description: string; rule: GateRule }) => Promise<Json>;
  onDone: (policy: Json) => Promise<void>;
}) {
  const [draft, setDraft] = useState<PolicyDraft>(props.initial);
  const [tried, setTried] = useState(false);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const problems = new Map(ruleProblems(draft.rule));
  const set = (patch: Partial<PolicyDraft>) => {
    setSaved(false);
    setDraft({ ...draft, ...patch });
  };
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setTried(true);
        if (problems.size > 0) return;
        const policy = await save.run(() =>
          props.send({ name: draft.name, description: draft.description, rule: toRule(draft.rule) }),
        );
        if (policy) {
          setSaved(true);
          await props.onDone(policy);
        }
      }}
    >
      <fieldset disabled={Boolean(props.deny)}>
        <NameFields
          name={draft.name}
          description={draft.description}
          onName={(name) => set({ name })}
          onDescription={(description) => set({ description })}
          problem={save.problem}
        />
        <RuleBuilder
          value={draft.rule}
          gates={props.gates}
          onChange={(rule) => set({ rule })}
          problems={tried ? problems : new Map()}
          apiError={save.problem?.fields.rule}
        />
      </fieldset>
      {tried && problems.size > 0 && (
        <p role="alert" class="form-error">
          The rule is not complete: {[...problems].map(([part, why]) => `${part}: ${why}`).join(' ')}
        </p>
      )}
      <FormProblem problem={save.problem} />
      <GuardedButton
        type="submit"
        denied={props.deny}
        disabled={!draft.name || save.busy}
        aria-busy={save.busy || undefined}
      >
        {props.submitLabel}
      </GuardedButton>
      {saved && <p role="status">Saved.</p>}
    </form>
  );
}

export function GatePolicyDetail() {
  const o = useOrg();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = { orgSlug: o.slug, policyId: params.policyId as string };
  const policy = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/gate-policies/{policyId}', { params: { path } })),
    [o.slug, params.policyId],
  );
  const gates = useGates();
  const deny = o.deny('org.tokenGates.edit');
  if (policy.loading && !policy.data) return <Loading what="the gate policy" />;
  if (policy.error) return <LoadError problem={policy.error} />;
  const p = policy.data as Json;
  const list = `/console/orgs/${o.slug}/token-gates/policies`;
  return (
    <>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href={`/console/orgs/${o.slug}/token-gates`}>Token gates</a>
          </li>
          <li>
            <a href={list}>Policies</a>
          </li>
          <li>
            <span aria-current="page">{p.name}</span>
          </li>
        </ul>
      </nav>
      <h1>{p.name}</h1>
      <p>
        Policy id <code>{p.id}</code>
      </p>
      <p>{describeRule(p.rule as GateRule, nameOf(gates.data))}</p>
      <div class="actions">
        <DeleteWithConfirm
          what="policy"
          title={`Delete the policy ${p.name}?`}
          deny={deny}
          remove={() =>
            unwrap(
              api.DELETE('/identity/organizations/{orgSlug}/gate-policies/{policyId}', { params: { path } }),
            )
          }
          onDeleted={() => route(list)}
          inUse={(problem) => (
            <p role="alert" class="form-error">
              This policy is in use: {problem.message}. Set that scope's or app's gate policy to none (on the
              brand's Scopes or the app's page) first.
            </p>
          )}
        >
          <p>Checks against it will answer 404. Its gates stay.</p>
        </DeleteWithConfirm>
      </div>
      <PolicyTester policyId={p.id} gates={gates.data} />
      <section>
        <h2>Settings</h2>
        {gates.data && (
          <PolicyForm
            key={p.updatedAt}
            gates={gates.data}
            deny={deny}
            submitLabel="Save policy"
            initial={{ name: p.name, description: p.description ?? '', rule: toNode(p.rule as GateRule) }}
            send={(body) =>
              unwrap(
                api.PATCH('/identity/organizations/{orgSlug}/gate-policies/{policyId}', {
                  params: { path },
                  body: { name: body.name, description: body.description || null, rule: body.rule as Json },
                }),
              )
            }
            onDone={() => policy.reload()}
          />
        )}
      </section>
    </>
  );
}

/** The public policy check, as a page would call it: the answer and every gate's. */
function PolicyTester({ policyId, gates }: { policyId: string; gates?: GateOption[] }) {
  const o = useOrg();
  const [outcome, setOutcome] = useState<Json>();
  const check = useAction();
  const run = (wallet: string, refresh: boolean, attest: boolean) =>
    check.run(async () => {
      const r = await api.GET('/identity/organizations/{orgSlug}/gate-policies/{policyId}/check', {
        params: {
          path: { orgSlug: o.slug, policyId },
          query: checkQuery(wallet, refresh, attest),
        },
      });
      if (!r.response.ok) throw toProblem(r.response.status, r.error);
      setOutcome(r.data);
    });
  const gate = (id: string) => gates?.find((g) => g.id === id);
  return (
    <section>
      <h2>Check a wallet</h2>
      <p>The public policy check: every gate of the rule is checked, with the gate check's cache.</p>
      <WalletCheckForm check={check} onCheck={run} />
      {outcome && (
        <article aria-live="polite" aria-label="Policy check result" class="result">
          <p>
            <strong>{outcome.hasAccess ? 'Access granted' : 'No access'}</strong>
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Gate</th>
                  <th scope="col">Access</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {outcome.gates.map((g: Json) => (
                  <tr key={g.gateId}>
                    <th scope="row">
                      {gate(g.gateId)?.name ?? g.gateId} <small>({kindLabel(gate(g.gateId)?.kind)})</small>
                    </th>
                    <td>{g.hasAccess ? 'Passes' : 'Fails'}</td>
                    <td>{g.balance == null ? 'unknown' : amountInUnit(gate(g.gateId)?.kind, g.balance)}</td>
                    <td>{reasonText(g.reason)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {outcome.attestation && <Attestation jws={outcome.attestation} />}
        </article>
      )}
    </section>
  );
}
