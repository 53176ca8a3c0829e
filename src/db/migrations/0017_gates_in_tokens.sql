-- why: gates in tokens (issue 21 item 5, DESIGN §3 "Token gates beyond the interface"). A brand scope
-- may name a gate policy (granted only while a linked wallet passes it) and an app may require one
-- for sign-in. Both reference gate_policies without cascade, so deleting a policy in use fails on
-- the foreign key (409) instead of a check-then-delete; a soft-deleted app lets go of its policy.
-- A device authorization denied because the user's wallets fail the app's requirement says so, so
-- the polling device gets the requirement's error description rather than "the user denied".
alter table brand_scopes
  add column gate_policy_id text
  constraint brand_scopes_gate_policy_fkey references gate_policies (id);

create index brand_scopes_gate_policy_idx on brand_scopes (gate_policy_id) where gate_policy_id is not null;

alter table apps
  add column required_gate_policy_id text
  constraint apps_required_gate_policy_fkey references gate_policies (id);

create index apps_required_gate_policy_idx on apps (required_gate_policy_id)
  where required_gate_policy_id is not null;

alter table device_authorizations
  add column denial text
  constraint device_authorizations_denial_check check (denial in ('requirement'));
