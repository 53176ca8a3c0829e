-- why: the tables every part of Gatehouse stands on: users, uploaded files, signing keys, system
-- (admin) permissions, orgs with their roles and members, brands and apps (the console brand and
-- app are created at first start), the audit log and the event outbox that the mutation path
-- writes in the same transaction as each change.

create table users (
  id text primary key,
  username text,
  first_name text,
  last_name text,
  preferred_language text,
  phone_country_code text,
  phone_number text,
  profile_picture_id text,
  external_profile_picture_url text,
  email text,
  email_verified boolean not null default false,
  last_seen timestamptz not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  constraint users_username_key unique (username)
);

create table files (
  id text primary key,
  file_key text not null,
  content_type text not null,
  bytes integer not null,
  data bytea not null,
  owner_user_id text references users (id) on delete set null,
  created_at timestamptz not null,
  constraint files_file_key_key unique (file_key)
);

create table signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  private_key_enc text not null,
  created_at timestamptz not null,
  retired_at timestamptz
);

create table system_permissions (
  user_id text not null references users (id) on delete cascade,
  permission text not null,
  granted_at timestamptz not null,
  primary key (user_id, permission)
);

create table orgs (
  id text primary key,
  name text not null,
  slug text not null,
  slug_claim text,
  description text,
  icon_file_id text references files (id) on delete set null,
  created_by text not null,
  payment_product_id text,
  payment_customer_id text,
  tier text not null default 'identity',
  is_system boolean not null default false,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  constraint orgs_slug_key unique (slug_claim)
);

create table roles (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  name text not null,
  description text,
  built_in text,
  permissions text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint roles_org_name_key unique (org_id, name)
);

create table org_members (
  org_id text not null references orgs (id) on delete cascade,
  user_id text not null references users (id) on delete cascade,
  joined_at timestamptz not null,
  disabled_at timestamptz,
  primary key (org_id, user_id)
);
create index org_members_user_idx on org_members (user_id);

create table member_roles (
  org_id text not null,
  user_id text not null,
  role_id text not null references roles (id),
  assigned_at timestamptz not null,
  primary key (org_id, user_id, role_id),
  foreign key (org_id, user_id) references org_members (org_id, user_id) on delete cascade
);
create index member_roles_role_idx on member_roles (role_id);

create table brands (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  slug text not null,
  name text not null,
  oauth_callback_id text not null,
  logo_file_id text references files (id) on delete set null,
  primary_color text,
  support_email text,
  privacy_policy_url text,
  terms_url text,
  provider_order text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  constraint brands_org_slug_key unique (org_id, slug),
  constraint brands_oauth_callback_id_key unique (oauth_callback_id)
);

create table apps (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  brand_id text not null references brands (id) on delete cascade,
  client_id text not null,
  client_secret_hash text,
  name text not null,
  type text not null,
  is_confidential boolean not null,
  redirect_uris text[] not null,
  allowed_grant_types text[] not null,
  allowed_scopes text[] not null,
  enabled boolean not null,
  first_party boolean not null default false,
  description text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  constraint apps_client_id_key unique (client_id)
);
create index apps_brand_idx on apps (brand_id);

create table audit_log (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  actor_user_id text,
  action text not null,
  resource_type text not null,
  resource_id text not null,
  metadata jsonb,
  "timestamp" timestamptz not null
);
create index audit_log_org_time_idx on audit_log (org_id, "timestamp" desc, id desc);

create table events (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  type text not null,
  actor_user_id text,
  data jsonb not null,
  created_at timestamptz not null
);
create index events_org_time_idx on events (org_id, created_at desc);
