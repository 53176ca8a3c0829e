-- why: a provider link's `authorizationUrl` could be completed by any browser, so an attacker could
-- send theirs to a victim and have the victim's provider account linked into the attacker's
-- Gatehouse account (review finding 2). A link is now bound to the browser that started it (the
-- flow-state cookie's SHA-256 in `binding_hash`, as interactions have) and ends on a confirmation
-- page: the identity the provider returned waits, sealed, in `pending_link_enc` until that browser
-- confirms with the page's CSRF token (`confirmed_at`), and is cleared then. Link states started
-- before this version carry no binding and can never be completed, so they are dropped.

alter table provider_states add column binding_hash text;
alter table provider_states add column pending_link_enc text;
alter table provider_states add column confirmed_at timestamptz;

delete from provider_states where purpose = 'link';
