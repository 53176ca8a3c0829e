-- why: end users' own records. `activity` is the sign-in history the profile page shows (the last
-- five events). `api_keys` holds user API keys as a SHA-256 hash plus the 8-character display
-- prefix, never the key. `oauth_links` records the upstream accounts a user signed in with, their
-- provider tokens sealed with the server's encryption key. `deleted_identities` keeps, during an
-- account's deletion grace window, only hashes of its sign-in identities so that signing in again
-- restores the same account. `users_graveyard` is what remains of an account after the window: the
-- proof that it was deleted and when.

create table activity (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  type text not null,
  provider text,
  ip text,
  user_agent text,
  created_at timestamptz not null,
  constraint activity_type_check check (
    type in ('sign_in', 'sign_in_failed', 'link_provider', 'unlink_provider', 'device_authorized'))
);
create index activity_user_time_idx on activity (user_id, created_at desc, id desc);

create table api_keys (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  name text not null,
  prefix text not null,
  key_hash text not null,
  type text not null,
  scopes text[] not null,
  ip_allowlist text[] not null,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null,
  constraint api_keys_key_hash_key unique (key_hash),
  constraint api_keys_type_check check (type in ('standard', 'ephemeral'))
);
create index api_keys_user_idx on api_keys (user_id, created_at desc);

create table oauth_links (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  provider text not null,
  external_user_id text not null,
  email_address text,
  username text,
  access_token_enc text,
  refresh_token_enc text,
  token_expires_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint oauth_links_provider_external_key unique (provider, external_user_id)
);
create index oauth_links_user_idx on oauth_links (user_id);

create table deleted_identities (
  identity_hash text not null,
  user_id text not null references users (id) on delete cascade,
  deleted_at timestamptz not null,
  constraint deleted_identities_pkey primary key (identity_hash, user_id)
);
create index deleted_identities_user_idx on deleted_identities (user_id);

create table users_graveyard (
  id text primary key,
  deleted_at timestamptz not null,
  purged_at timestamptz not null
);

-- The sweeper looks for accounts whose grace window has ended.
create index users_deleted_at_idx on users (deleted_at) where deleted_at is not null;
