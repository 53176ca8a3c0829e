-- why: signing in through the hosted pages needs state that any instance can read: the user's
-- wallets (a wallet signs in to exactly one account), the wallet challenges (stored only as hashes,
-- redeemed once with an atomic update), the sign-in interactions between /oauth2/authorize and the
-- redirect back, the per-brand browser sessions (the cookie holds a random id; only its hash is
-- stored) and the consent a user gave each app (one row per user and app, the union of its scopes).

create table user_public_keys (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  blockchain text not null default 'solana',
  address text not null,
  label text,
  is_primary boolean not null default false,
  last_used_at timestamptz,
  created_at timestamptz not null,
  constraint user_public_keys_address_key unique (blockchain, address)
);
create index user_public_keys_user_idx on user_public_keys (user_id, created_at);
-- At most one primary wallet per user.
create unique index user_public_keys_one_primary_key on user_public_keys (user_id) where is_primary;

create table wallet_challenges (
  id text primary key,
  -- SHA-256 hex of the exact UTF-8 message: the signed bytes find their challenge.
  message_hash text not null,
  nonce_hash text not null,
  brand_id text not null references brands (id) on delete cascade,
  address text not null,
  purpose text not null,
  user_id text references users (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  constraint wallet_challenges_message_hash_key unique (message_hash),
  constraint wallet_challenges_nonce_hash_key unique (nonce_hash),
  constraint wallet_challenges_purpose_check check (purpose in ('signin', 'link'))
);
create index wallet_challenges_expires_idx on wallet_challenges (expires_at);

create table interactions (
  id text primary key,
  -- 'authorize' returns to the client's redirect_uri; 'device' returns to the device page.
  kind text not null,
  app_id text not null references apps (id) on delete cascade,
  client_id text not null,
  brand_id text not null references brands (id) on delete cascade,
  -- The validated authorize request (redirect_uri, scopes, state, nonce, code_challenge, prompt …).
  params jsonb not null,
  -- Where a 'device' interaction sends the browser when sign-in is done.
  return_to text,
  user_id text references users (id) on delete cascade,
  session_id text,
  auth_time timestamptz,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  completed_at timestamptz,
  constraint interactions_kind_check check (kind in ('authorize', 'device'))
);
create index interactions_expires_idx on interactions (expires_at);

create table sessions (
  id text primary key,
  -- SHA-256 hex of the cookie value.
  token_hash text not null,
  user_id text not null references users (id) on delete cascade,
  brand_id text not null references brands (id) on delete cascade,
  auth_time timestamptz not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  constraint sessions_token_hash_key unique (token_hash)
);
create index sessions_user_idx on sessions (user_id);
create index sessions_expires_idx on sessions (expires_at);

create table consent_grants (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  app_id text not null references apps (id) on delete cascade,
  client_id text not null,
  org_id text not null references orgs (id) on delete cascade,
  scopes text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint consent_grants_user_app_key unique (user_id, app_id)
);
create index consent_grants_app_idx on consent_grants (app_id);
