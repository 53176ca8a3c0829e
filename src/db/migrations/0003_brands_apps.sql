-- why: brands get their own scope vocabulary (shown on the consent screen, named in token claims)
-- and their own credentials for upstream sign-in providers (encrypted at rest, never returned).
-- The `console` brand slug is the audience the REST API trusts, so only the system org may hold it:
-- the check constraint is the last wall behind the service's 409. Apps and brands are listed per
-- parent, newest first, without their soft-deleted rows.

create table brand_scopes (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  brand_id text not null references brands (id) on delete cascade,
  name text not null,
  description text not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint brand_scopes_brand_name_key unique (brand_id, name)
);

create table connections (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  brand_id text not null references brands (id) on delete cascade,
  type text not null,
  enabled boolean not null,
  -- AES-256-GCM of the JSON ProviderConfig, sealed with AAD `connection:<brand id>:<type>`;
  -- the ciphertext names the key id that sealed it.
  config_enc text not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint connections_brand_type_key unique (brand_id, type)
);

alter table brands
  add constraint brands_console_slug_reserved check (slug <> 'console' or org_id = 'org_system');

create index brands_org_live_idx on brands (org_id, created_at, id) where deleted_at is null;
create index apps_brand_live_idx on apps (brand_id, created_at, id) where deleted_at is null;
