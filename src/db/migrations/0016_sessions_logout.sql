-- why: sessions and logout (issue 20, DESIGN §3 "Sessions, logout and wallet claims"). A session
-- remembers when it was last used, the browser that opened it and the apps that were issued tokens
-- in it (session_clients), so a user can list and end sessions and logout can tell those apps
-- (back-channel logout). Access tokens record their session so logout revokes them too. Apps gain
-- post-logout redirect URIs and a back-channel logout URI. Logout tokens travel the webhook queue
-- (webhook_deliveries, the outbox): a row of kind `backchannel_logout` has no webhook but an app.

alter table sessions add column last_seen_at timestamptz;
alter table sessions add column user_agent text;
alter table sessions add column ip text;
update sessions set last_seen_at = created_at;
alter table sessions alter column last_seen_at set not null;

create table session_clients (
  session_id text not null references sessions (id) on delete cascade,
  client_id text not null,
  created_at timestamptz not null,
  constraint session_clients_pkey primary key (session_id, client_id)
);
create index session_clients_client_idx on session_clients (client_id);

alter table access_tokens add column session_id text;
create index access_tokens_session_idx on access_tokens (session_id) where session_id is not null;
create index refresh_tokens_session_idx on refresh_tokens (session_id) where session_id is not null;
create index authorization_codes_session_idx on authorization_codes (session_id) where session_id is not null;

alter table apps add column post_logout_redirect_uris text[] not null default '{}';
alter table apps add column backchannel_logout_uri text;

alter table webhook_deliveries alter column webhook_id drop not null;
alter table webhook_deliveries add column kind text not null default 'webhook';
alter table webhook_deliveries add column app_id text references apps (id) on delete cascade;
alter table webhook_deliveries add constraint webhook_deliveries_kind_check check (
  (kind = 'webhook' and webhook_id is not null)
  or (kind = 'backchannel_logout' and app_id is not null and webhook_id is null)
);
create index webhook_deliveries_app_idx on webhook_deliveries (app_id, queued_at desc) where app_id is not null;
