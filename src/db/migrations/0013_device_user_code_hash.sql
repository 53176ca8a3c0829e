-- why: device user codes were kept in plaintext in the device flow's interaction rows (`params.userCode`
-- and `return_to` = `/device?user_code=…`) while `device_authorizations` stores only their SHA-256
-- (review finding 12): a database reader could approve a pending device as any user who then signs
-- in. The browser now keeps the code in a cookie of the device flow and the row keeps its hash
-- (`params.userCodeHash`, of the normalised code: upper case, no spaces or dashes). This scrubs the
-- rows already there; a browser in the middle of such a flow enters its code once more.

update interactions
set params = (params - 'userCode')
      || jsonb_build_object(
           'userCodeHash',
           encode(sha256(convert_to(upper(regexp_replace(params ->> 'userCode', '[\s-]', '', 'g')), 'UTF8')), 'hex')),
    return_to = '/device'
where kind = 'device' and params ? 'userCode';

update interactions
set return_to = '/device'
where kind = 'device' and return_to like '%user_code=%';
