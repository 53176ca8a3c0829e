import { api, unwrap } from '../api.js';
import type { GateOption } from '../components/rule-builder.js';
import { useLoad } from '../hooks.js';
import { useOrg } from '../session.js';

/** The org's gates (the first 100): the rule builder's and the bulk tester's pickers, names in rules. */
export function useGates() {
  const o = useOrg();
  return useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/token-gates', {
          params: { path: { orgSlug: o.slug }, query: { limit: 100, offset: 0 } },
        }),
      ).then((r) => r.items as GateOption[]),
    [o.slug],
  );
}

/** A gate's name by id, for rules and results ("unknown gate …" once deleted). */
export const nameOf = (gates: GateOption[] | undefined) => (id: string) =>
  gates?.find((g) => g.id === id)?.name ?? `unknown gate ${id}`;

/** The org's gate policies (the first 100): their list, pickers, and what uses a gate. */
export function usePolicies() {
  const o = useOrg();
  return useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/gate-policies', {
          params: { path: { orgSlug: o.slug }, query: { limit: 100, offset: 0 } },
        }),
      ),
    [o.slug],
  );
}
