-- why: the brand slug is the access token's `aud`, and resource servers trust `iss` + `aud`. Unique
-- only within an org, another org could create a brand with the same slug and mint tokens (client
-- credentials, or its own users') that the first org's resource servers accept. Brand slugs become
-- unique across the whole service, deleted brands included (a soft-deleted row keeps its slug, so an
-- old audience can never be handed to someone else). A database that already holds duplicates is
-- refused with the list and how to rename them: which brand keeps a slug is the operator's call.

do $$
declare
  dups text;
begin
  select string_agg(line, E'\n' order by line) into dups
  from (
    select format('  slug %L: %s', b.slug,
                  string_agg(format('brand %s (org %s%s)', b.id, o.slug,
                                    case when b.deleted_at is not null then ', deleted' else '' end),
                             ', ' order by b.created_at, b.id)) as line
    from brands b join orgs o on o.id = b.org_id
    group by b.slug
    having count(*) > 1
  ) d;
  if dups is not null then
    raise exception using
      message = 'migration 0011_brand_slug_global: brand slugs must be unique across the service '
        || '(the slug is the access-token audience), and these are held by several brands:' || E'\n' || dups
        || E'\n' || 'Keep each slug on one brand and rename the others before starting this version, for example: '
        || 'update brands set slug = ''<new-slug>'' where id = ''<brand id>''; '
        || '(slugs match [a-z0-9-]{3,30}; tell the renamed brand''s resource servers to expect the new aud, '
        || 'and its apps that tokens issued before carry the old one). Then start again.';
  end if;
end $$;

alter table brands drop constraint brands_org_slug_key;
alter table brands add constraint brands_slug_key unique (slug);
