-- why: the audit log page's `total` counted every matching entry per request (81 ms p99 at 1 M
-- entries with no filter, issue 23). The log is append-only with `timestamp` = the time of writing,
-- so a day that has closed keeps its counts: audit_log_daily holds them per org and UTC day, for
-- every entry (dim 'all', value '') and per value of each broad filter (dim 'action', 'actor',
-- 'type'). audit_log_rollups.rolled_until says up to where an org's days are counted there (every day
-- before it; none at or after it). `total` = the sum of the counted days inside the filter's range +
-- a live, index-backed count of the rest (the days not counted yet, the partial days at the edges).
-- Pruning decrements the counts of the entries it deletes in the same statement; deleting the org
-- takes both with it.
create table audit_log_daily (
  org_id text not null constraint audit_log_daily_org_fkey references orgs (id) on delete cascade,
  dim text not null,
  value text not null,
  day timestamptz not null,
  n bigint not null,
  constraint audit_log_daily_pkey primary key (org_id, dim, value, day)
);

create table audit_log_rollups (
  org_id text constraint audit_log_rollups_pkey primary key
    constraint audit_log_rollups_org_fkey references orgs (id) on delete cascade,
  rolled_until timestamptz not null
);
