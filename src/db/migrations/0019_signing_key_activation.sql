-- why: scheduled signing-key rotation (issue 20, KEY_ROTATION_DAYS). A key made by the schedule is
-- published in the JWKS a day before it signs: activates_at says from when it may sign (null: at
-- once, as `gatehouse keys rotate` and the first key have always done).
alter table signing_keys add column activates_at timestamptz;
