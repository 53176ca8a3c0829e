-- why: an interaction started by /oauth2/authorize must be finished by the browser that started it,
-- or an attacker can complete their own upstream sign-in in a victim's browser (login CSRF). The
-- browser gets a random 256-bit cookie; the row keeps only its SHA-256 hex. Null means the
-- interaction was not bound to a browser, and no cookie is asked for.

alter table interactions add column binding_hash text;
