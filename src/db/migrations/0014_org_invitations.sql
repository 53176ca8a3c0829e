-- why: invitation links (issue 17). An org admin hands out a single-use link that makes whoever
-- accepts it a member with the chosen roles. Only the SHA-256 of the link's 256-bit token is kept,
-- so a database reader cannot accept an invitation; accepted_at/revoked_at make it single use.
create table org_invitations (
  id text constraint org_invitations_pkey primary key,
  org_id text not null constraint org_invitations_org_fkey references orgs (id) on delete cascade,
  token_hash text not null constraint org_invitations_token_hash_key unique,
  role_ids text[] not null,
  created_by text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by text,
  revoked_at timestamptz
);

create index org_invitations_org_idx on org_invitations (org_id, created_at);
