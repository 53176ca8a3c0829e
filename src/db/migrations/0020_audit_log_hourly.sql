-- why: with per-day counts (0017) the live part of `total` was still every entry of today and of the
-- partial days at since/until (~25,000 rows, ~15 ms per request at 1 M entries, issue 23). Per-hour
-- counts bound it: audit_log_hourly holds the counts of every closed hour (same dims as
-- audit_log_daily), so a total is at most a range of days, two ranges of hours and two partial hours
-- counted live (the current hour and the hour at since). audit_log_rollups.hours_until says up to
-- where an org's hours are counted (every hour before it; null: none yet). Pruning decrements both
-- tables in the same statement; deleting the org takes them with it.
create table audit_log_hourly (
  org_id text not null constraint audit_log_hourly_org_fkey references orgs (id) on delete cascade,
  dim text not null,
  value text not null,
  hour timestamptz not null,
  n bigint not null,
  constraint audit_log_hourly_pkey primary key (org_id, dim, value, hour)
);

alter table audit_log_rollups add column hours_until timestamptz;
