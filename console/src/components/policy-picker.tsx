import type { ApiProblem } from '../lib/problems.js';
import { missingReason } from '../lib/problems.js';
import { usePolicies } from '../pages/gate-data.js';
import { SelectField } from './ui.js';

/**
 * Picks one of the org's gate policies by name, or none (`''`). Without `org.tokenGates.view` the
 * list cannot load: the picker keeps the current value and says which permission is missing.
 */
export function PolicyPicker(props: {
  label: string;
  name: string;
  value: string;
  onChange: (policyId: string) => void;
  none: string;
  hint?: string;
  problem?: ApiProblem;
  disabled?: boolean;
}) {
  const policies = usePolicies();
  const items = (policies.data?.items ?? []) as { id: string; name: string }[];
  const known = !props.value || items.some((p) => p.id === props.value);
  const failed = policies.error
    ? policies.error.status === 403
      ? missingReason(policies.error.missing)
      : policies.error.message
    : null;
  return (
    <SelectField
      label={props.label}
      name={props.name}
      value={props.value}
      hint={failed ? `The policies cannot be listed: ${failed}` : props.hint}
      problem={props.problem}
      disabled={props.disabled || Boolean(failed) || policies.loading}
      onChange={props.onChange}
    >
      <option value="">{props.none}</option>
      {!known && (
        <option value={props.value}>{policies.loading ? 'Loading…' : `Policy ${props.value}`}</option>
      )}
      {items.map((p) => (
        <option key={p.id} value={p.id}>
          {p.name}
        </option>
      ))}
    </SelectField>
  );
}
