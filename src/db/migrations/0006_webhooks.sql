-- why: org webhooks and their delivery log. The delivery log is also the delivery queue (a
-- transactional outbox): rows are inserted in the transaction of the change that fired the event,
-- and any instance claims due rows with FOR UPDATE SKIP LOCKED under a short lease.

create table webhooks (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  url text not null,
  -- Sorted, de-duplicated event names (or '*').
  events text[] not null,
  -- The sorted events joined with ',': the duplicate-subscription key.
  events_key text not null,
  -- AES-256-GCM sealed `whsec_...` secret (it must sign, so it cannot be hashed).
  secret_enc text not null,
  enabled boolean not null default true,
  consecutive_failures integer not null default 0,
  last_delivered_at timestamptz,
  disabled_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint webhooks_org_url_events_key unique (org_id, url, events_key)
);

create table webhook_deliveries (
  -- A UUID: the envelope id, Service-Delivery and webhook-id. Kept across retries.
  id text primary key,
  webhook_id text not null references webhooks (id) on delete cascade,
  org_id text not null references orgs (id) on delete cascade,
  event_id text,
  event text not null,
  url text not null,
  -- The exact JSON envelope sent on every attempt.
  body text not null,
  status text not null,
  response_code integer,
  response_body_excerpt text,
  attempt_count integer not null default 0,
  queued_at timestamptz not null,
  delivered_at timestamptz,
  next_attempt_at timestamptz,
  -- Set while an instance is sending an attempt; another instance may take the row only after it.
  locked_until timestamptz,
  replay_of text,
  constraint webhook_deliveries_status_check check (
    status in ('pending', 'succeeded', 'failed_timeout', 'failed_status', 'failed_network')
  )
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_webhook_idx on webhook_deliveries (webhook_id, queued_at desc, id desc);
create index webhooks_org_idx on webhooks (org_id);
