-- why: the token side of the issuer. Authorization codes, refresh tokens and device codes are
-- single-use secrets, so only their SHA-256 hashes are stored and each row carries `consumed_at`
-- for the atomic `UPDATE … WHERE consumed_at IS NULL RETURNING`. Every user grant (a code or a
-- device authorization) starts a token family: refresh tokens rotate inside it and the access
-- tokens issued from it are recorded by jti, so code reuse, refresh reuse, consent revocation and
-- account deletion can revoke the whole family. Revoked access-token jtis are kept until the
-- token would have expired, so the issuer refuses them at once.

create table authorization_codes (
  code_hash text not null,
  family_id text not null,
  client_id text not null,
  user_id text not null,
  redirect_uri text not null,
  scopes text[] not null,
  nonce text,
  code_challenge text,
  auth_time bigint not null,
  session_id text,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  consumed_at timestamptz,
  constraint authorization_codes_pkey primary key (code_hash)
);
create index authorization_codes_user_idx on authorization_codes (user_id);
create index authorization_codes_expires_idx on authorization_codes (expires_at);

create table refresh_tokens (
  id text not null,
  token_hash text not null,
  family_id text not null,
  client_id text not null,
  user_id text not null,
  scopes text[] not null,
  auth_time bigint not null,
  session_id text,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  consumed_at timestamptz,
  revoked_at timestamptz,
  constraint refresh_tokens_pkey primary key (id),
  constraint refresh_tokens_token_hash_key unique (token_hash)
);
create index refresh_tokens_family_idx on refresh_tokens (family_id);
create index refresh_tokens_user_client_idx on refresh_tokens (user_id, client_id);
create index refresh_tokens_expires_idx on refresh_tokens (expires_at);

-- Access tokens issued to users (client-credentials tokens have no family and are not recorded).
create table access_tokens (
  jti text not null,
  family_id text not null,
  client_id text not null,
  user_id text not null,
  expires_at timestamptz not null,
  constraint access_tokens_pkey primary key (jti)
);
create index access_tokens_family_idx on access_tokens (family_id);
create index access_tokens_user_client_idx on access_tokens (user_id, client_id);
create index access_tokens_expires_idx on access_tokens (expires_at);

create table revoked_tokens (
  jti text not null,
  expires_at timestamptz not null,
  revoked_at timestamptz not null,
  constraint revoked_tokens_pkey primary key (jti)
);
create index revoked_tokens_expires_idx on revoked_tokens (expires_at);

create table device_authorizations (
  id text not null,
  device_code_hash text not null,
  -- SHA-256 of the normalised user code (upper case, no dash).
  user_code_hash text not null,
  client_id text not null,
  scopes text[] not null,
  status text not null,
  user_id text,
  auth_time bigint,
  poll_interval integer not null,
  last_polled_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  consumed_at timestamptz,
  constraint device_authorizations_pkey primary key (id),
  constraint device_authorizations_device_code_hash_key unique (device_code_hash),
  constraint device_authorizations_user_code_hash_key unique (user_code_hash),
  constraint device_authorizations_status_check check (status in ('pending', 'approved', 'denied'))
);
create index device_authorizations_expires_idx on device_authorizations (expires_at);
