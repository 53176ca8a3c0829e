-- why: signing in (or linking an account) through an upstream provider leaves the service and comes
-- back on another request, possibly to another instance. `provider_states` carries what the return
-- needs: the hash of the `state` sent to the provider (or, for Telegram, of the cookie that binds the
-- browser), the interaction or the user it belongs to, the brand whose credentials were used, the
-- sealed OIDC nonce and PKCE verifier. Each row is redeemed once with an atomic
-- update and dies with its interaction. `oauth_links.brand_id` remembers whose credentials issued a
-- link's provider tokens, so unlinking can revoke them with the same client.

create table provider_states (
  id text primary key,
  state_hash text not null,
  provider text not null,
  brand_id text not null references brands (id) on delete cascade,
  purpose text not null,
  interaction_id text references interactions (id) on delete cascade,
  user_id text references users (id) on delete cascade,
  nonce_enc text,
  code_verifier_enc text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  constraint provider_states_state_hash_key unique (state_hash),
  constraint provider_states_purpose_check check (purpose in ('signin', 'link')),
  constraint provider_states_owner_check check (
    (purpose = 'signin' and interaction_id is not null) or (purpose = 'link' and user_id is not null))
);
create index provider_states_expires_idx on provider_states (expires_at);

alter table oauth_links add column brand_id text references brands (id) on delete set null;
