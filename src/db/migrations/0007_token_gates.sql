-- why: token gates (issue 8). A gate says "a wallet holding at least min_holdings raw units of
-- mint_address passes". min_holdings is stored as a canonical decimal string (no sign, no leading
-- zeros) rather than numeric so that any size round-trips exactly through every driver; the service
-- compares it as a BigInt. The public check looks a gate up by id and its org by id (both primary
-- keys), then compares the slug; the list pages an org's gates by creation time.

create table token_gates (
  id text primary key,
  org_id text not null constraint token_gates_org_id_fkey references orgs (id) on delete cascade,
  name text not null,
  description text,
  mint_address text not null,
  min_holdings text not null,
  enabled boolean not null default true,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint token_gates_min_holdings_check check (min_holdings ~ '^(0|[1-9][0-9]*)$'),
  constraint token_gates_name_check check (char_length(name) between 1 and 80),
  constraint token_gates_description_check check (description is null or char_length(description) <= 500)
);
create index token_gates_org_created_idx on token_gates (org_id, created_at, id);
