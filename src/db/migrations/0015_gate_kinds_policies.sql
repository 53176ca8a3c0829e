-- why: token gates beyond the interface (issue 21, DESIGN §3). A gate gains a kind: `token` (the
-- interface's rule, the default for every existing gate), `collection` (NFTs of a verified Metaplex
-- collection) or `sol` (native plus wrapped lamports). Gate policies compose gates with a rule
-- (all / any / atLeast / not); gate_policy_gates lists the gates a policy's rule names, so deleting a
-- gate in use fails on its foreign key (409) instead of a check-then-delete.
alter table token_gates
  add column kind text not null default 'token'
  constraint token_gates_kind_check check (kind in ('token', 'collection', 'sol'));

create table gate_policies (
  id text constraint gate_policies_pkey primary key,
  org_id text not null constraint gate_policies_org_fkey references orgs (id) on delete cascade,
  name text not null,
  description text,
  rule jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index gate_policies_org_idx on gate_policies (org_id, created_at);

create table gate_policy_gates (
  policy_id text not null constraint gate_policy_gates_policy_fkey references gate_policies (id) on delete cascade,
  gate_id text not null constraint gate_policy_gates_gate_fkey references token_gates (id),
  constraint gate_policy_gates_pkey primary key (policy_id, gate_id)
);

create index gate_policy_gates_gate_idx on gate_policy_gates (gate_id);
