-- why: the audit log is queried per org with exact-match filters (action, actor, resource) and a
-- time window, newest first, and it grows without bound until the daily pruning. Each filter gets an
-- index that starts with the org and ends with the page order, so a filtered page and its `total`
-- read only the matching entries. Pruning deletes by (org, timestamp), which the foundation's
-- audit_log_org_time_idx already serves. Member lists page by join time.

create index audit_log_org_action_time_idx on audit_log (org_id, action, "timestamp" desc, id desc);
create index audit_log_org_actor_time_idx on audit_log (org_id, actor_user_id, "timestamp" desc, id desc);
create index audit_log_org_resource_time_idx
  on audit_log (org_id, resource_type, resource_id, "timestamp" desc, id desc);

create index org_members_org_joined_idx on org_members (org_id, joined_at, user_id);
-- Lists of an org's orgs-for-admins page by creation time.
create index orgs_created_idx on orgs (created_at desc, id desc);
