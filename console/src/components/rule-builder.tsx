import { useId } from 'preact/hooks';
import { kindLabel } from '../lib/gate-kinds.js';
import {
  leaf,
  MAX_DEPTH,
  OP_LABELS,
  partLabel,
  type RuleNode,
  type RuleOp,
  removePart,
  update,
  withOp,
} from '../lib/gate-rules.js';
import { Field, SelectField } from './ui.js';

export interface GateOption {
  id: string;
  name: string;
  kind?: string;
}

interface PartProps {
  root: RuleNode;
  node: RuleNode;
  path: number[];
  gates: GateOption[];
  onChange: (root: RuleNode) => void;
  /** The builder's own messages by part label, shown once the user tried to save. */
  problems: Map<string, string>;
  /** The API's `validation_failed` message for `rule`, shown at the whole rule. */
  apiError?: string;
}

const LISTS: RuleOp[] = ['all', 'any', 'atLeast'];

/**
 * A gate policy's rule as nested parts: each part passes a gate or combines its own parts with
 * all / any / at least N / not, down to the 5 levels the API allows (the deepest parts are gates).
 */
export function RuleBuilder(props: Omit<PartProps, 'node' | 'path' | 'root'> & { value: RuleNode }) {
  return <Part {...props} root={props.value} node={props.value} path={[]} />;
}

function Part({ root, node, path, gates, onChange, problems, apiError }: PartProps) {
  const id = useId();
  const label = partLabel(path);
  const depth = path.length + 1;
  const set = (fn: (n: RuleNode) => RuleNode) => onChange(update(root, path, fn));
  const own = problems.get(label);
  const compoundError = node.op !== 'gate' ? own : undefined;
  const described = [apiError ? `${id}-api` : '', compoundError ? `${id}-own` : ''].filter(Boolean).join(' ');
  return (
    <fieldset class="rule-part" aria-describedby={described || undefined}>
      <legend>{label}</legend>
      {apiError && (
        <small id={`${id}-api`} class="field-error">
          {apiError}
        </small>
      )}
      <div class="rule-row">
        <SelectField
          label={`${label}: condition`}
          name={`op-${path.join('-')}`}
          value={node.op}
          onChange={(v) => set((n) => withOp(n, v as RuleOp))}
        >
          {(Object.keys(OP_LABELS) as RuleOp[]).map((op) => (
            <option key={op} value={op} disabled={op !== 'gate' && depth >= MAX_DEPTH}>
              {OP_LABELS[op]}
            </option>
          ))}
        </SelectField>
        {node.op === 'gate' && <GatePick node={node} label={label} gates={gates} error={own} set={set} />}
        {node.op === 'atLeast' && (
          <Field
            label={`${label}: how many`}
            name={`n-${path.join('-')}`}
            type="number"
            hint={`From 1 to ${node.parts.length}.`}
            value={String(node.atLeast)}
            onInput={(e) => {
              const n = Number((e.target as HTMLInputElement).value);
              set((x) => ({ ...x, atLeast: n }));
            }}
          />
        )}
      </div>
      {compoundError && (
        <small id={`${id}-own`} class="field-error">
          {compoundError}
        </small>
      )}
      {node.op !== 'gate' && (
        <Parts root={root} node={node} path={path} gates={gates} onChange={onChange} problems={problems} />
      )}
    </fieldset>
  );
}

function GatePick(props: {
  node: RuleNode;
  label: string;
  gates: GateOption[];
  error?: string;
  set: (fn: (n: RuleNode) => RuleNode) => void;
}) {
  const { node, gates } = props;
  const known = !node.gate || gates.some((g) => g.id === node.gate);
  return (
    <SelectField
      label={`${props.label}: gate`}
      name="gate"
      value={node.gate}
      error={props.error}
      onChange={(v) => props.set((n) => ({ ...n, gate: v }))}
    >
      <option value="">Choose a gate…</option>
      {!known && <option value={node.gate}>Unknown gate {node.gate}</option>}
      {gates.map((g) => (
        <option key={g.id} value={g.id}>
          {g.name} ({kindLabel(g.kind)})
        </option>
      ))}
    </SelectField>
  );
}

function Parts({ root, node, path, gates, onChange, problems }: Omit<PartProps, 'apiError'>) {
  const label = partLabel(path);
  const isList = LISTS.includes(node.op);
  const nested = path.length + 2 < MAX_DEPTH;
  return (
    <>
      <ol class="rule-parts">
        {node.parts.map((p, i) => (
          <li key={i}>
            <Part
              root={root}
              node={p}
              path={[...path, i]}
              gates={gates}
              onChange={onChange}
              problems={problems}
            />
            {isList && node.parts.length > 1 && (
              <button
                type="button"
                class="secondary outline small"
                onClick={() => onChange(removePart(root, path, i))}
              >
                Remove {partLabel([...path, i])}
              </button>
            )}
          </li>
        ))}
      </ol>
      {isList && (
        <button
          type="button"
          class="secondary small"
          onClick={() => onChange(update(root, path, (n) => ({ ...n, parts: [...n.parts, leaf()] })))}
        >
          Add a part to {label}
        </button>
      )}
      {!nested && isList && <small>Parts here can only pass a gate: a rule is at most 5 levels deep.</small>}
    </>
  );
}
