import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, type TestUser, buildTestApp, createUser, json } from '../helpers/app.js';

let t: TestApp;
let alice: TestUser;
let bob: TestUser;

before(async () => {
  t = await buildTestApp();
  alice = await createUser(t);
  bob = await createUser(t);
});
after(() => t.close());

const patch = (user: TestUser, id: string, payload: unknown) =>
  t.app.inject({ method: 'PATCH', url: `/users/${id}`, headers: user.auth, payload: payload as object });

function fieldsOf(res: { body: string }) {
  return [
    ...new Set((json(res).error.details.fields as Array<{ field: string }>).map((f) => f.field)),
  ].sort();
}

describe('GET /users/current and /users/me', () => {
  it('returns the caller as a full User with userPublicKeys and the rate limit headers', async () => {
    for (const url of ['/users/current', '/users/me']) {
      const res = await t.app.inject({ method: 'GET', url, headers: alice.auth });
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.equal(body.id, alice.id);
      assert.equal(body.username, alice.username);
      assert.deepEqual(body.userPublicKeys, []);
      assert.equal(typeof body.lastSeen, 'string');
      assert.equal(body.email, undefined);
      assert.equal(res.headers['ratelimit-limit'], '60');
      assert.ok(Number(res.headers['ratelimit-remaining']) < 60);
      assert.ok(res.headers['ratelimit-reset'] !== undefined);
    }
  });

  it('answers 401 unauthorized without credentials and invalid_token with a bad one', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/users/me' });
    assert.equal(none.statusCode, 401);
    assert.equal(json(none).error.code, 'unauthorized');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/users/me',
      headers: { authorization: 'Bearer abc.def.ghi' },
    });
    assert.equal(bad.statusCode, 401);
    assert.equal(json(bad).error.code, 'invalid_token');
  });
});

describe('PATCH /users/:id', () => {
  it('updates the caller profile (trimmed names, lowercased username, language, phone, picture)', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const upload = await t.app.inject({
      method: 'POST',
      url: '/files',
      headers: { ...alice.auth, 'content-type': 'multipart/form-data; boundary=x' },
      payload: Buffer.concat([
        Buffer.from(
          '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n',
        ),
        png,
        Buffer.from('\r\n--x--\r\n'),
      ]),
    });
    assert.equal(upload.statusCode, 201, upload.body);
    const fileId = json(upload).id;
    const res = await patch(alice, alice.id, {
      firstName: '  Alice ',
      lastName: 'Liddell',
      username: 'Alice-New',
      preferredLanguage: 'fr',
      phoneNumber: { countryCode: '+44', number: '20 7946 0958' },
      profilePicture: fileId,
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.firstName, 'Alice');
    assert.equal(body.lastName, 'Liddell');
    assert.equal(body.username, 'alice-new');
    assert.equal(body.preferredLanguage, 'fr');
    assert.equal(body.profilePicture.fileKey, json(upload).fileKey);
    // Bob cannot wear Alice's upload: a file id is not a capability.
    const borrowed = await patch(bob, bob.id, { profilePicture: fileId });
    assert.equal(borrowed.statusCode, 422, borrowed.body);
    assert.deepEqual(
      json(borrowed).error.details.fields.map((f: { field: string; code: string }) => [f.field, f.code]),
      [['profilePicture', 'not_found']],
    );
    assert.equal(body.phoneNumber, undefined, 'the phone number is never shown');
    const row = await t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', alice.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.phone_country_code, '+44');
    assert.equal(row.phone_number, '2079460958');
    alice.username = 'alice-new';

    const cleared = await patch(alice, 'me', { profilePicture: null, phoneNumber: null, lastName: null });
    assert.equal(cleared.statusCode, 200);
    assert.equal(json(cleared).profilePicture, undefined);
    assert.equal(json(cleared).lastName, undefined);
  });

  it("refuses another user's id with 403 forbidden", async () => {
    const res = await patch(alice, bob.id, { firstName: 'Mallory' });
    assert.equal(res.statusCode, 403);
    assert.equal(json(res).error.code, 'forbidden');
    const row = await t.ctx.db
      .selectFrom('users')
      .select('first_name')
      .where('id', '=', bob.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.first_name, null);
  });

  it('answers 422 validation_failed naming every failing field', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{ firstName: '   ' }, ['firstName']],
      [{ lastName: 'x'.repeat(81) }, ['lastName']],
      [{ username: 'ab' }, ['username']],
      [{ username: 'has space' }, ['username']],
      [{ username: 'a'.repeat(31) }, ['username']],
      [{ preferredLanguage: 'xx' }, ['preferredLanguage']],
      [{ preferredLanguage: 'eng' }, ['preferredLanguage']],
      [{ phoneNumber: { countryCode: '0', number: '12345' } }, ['phoneNumber.countryCode']],
      [{ phoneNumber: { countryCode: '+1', number: '12a45' } }, ['phoneNumber.number']],
      [{ phoneNumber: { countryCode: '+999', number: '1234567890123' } }, ['phoneNumber.number']],
      [{ profilePicture: 'file_doesnotexist' }, ['profilePicture']],
      [{ firstName: 5 }, ['firstName']],
      [{ email: 'a@b.c' }, ['email']],
      [{ phoneNumber: { countryCode: '+1' } }, ['phoneNumber', 'phoneNumber.number']],
      [
        { firstName: '', username: '!!', preferredLanguage: 'zz' },
        ['firstName', 'preferredLanguage', 'username'],
      ],
    ];
    for (const [payload, fields] of cases) {
      const res = await patch(alice, alice.id, payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(json(res).error.code, 'validation_failed');
      assert.deepEqual(fieldsOf(res), fields, JSON.stringify(payload));
    }
  });

  it('answers 409 conflict for a username another account holds', async () => {
    const res = await patch(bob, bob.id, { username: alice.username });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).error.code, 'conflict');
  });

  it('refuses an API key without users:write', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/users/me/api-keys',
      headers: bob.auth,
      payload: { name: 'reader', scopes: ['users:read'] },
    });
    const key = json(created).key;
    const res = await patch(bob, bob.id, { firstName: 'B' });
    assert.equal(res.statusCode, 200);
    const viaKey = await t.app.inject({
      method: 'PATCH',
      url: `/users/${bob.id}`,
      headers: { authorization: `Bearer ${key}` },
      payload: { firstName: 'C' },
    });
    assert.equal(viaKey.statusCode, 403);
    assert.deepEqual(json(viaKey).error.details.missing, ['users:write']);
    const read = await t.app.inject({
      method: 'GET',
      url: '/users/me',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(read.statusCode, 200);
    assert.equal(json(read).firstName, 'B');
  });
});

describe('POST /users/username-availability', () => {
  const check = (username: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/users/username-availability',
      headers: bob.auth,
      payload: { username },
    });

  it('reports taken and free names', async () => {
    assert.deepEqual(json(await check(alice.username)), { available: false });
    assert.deepEqual(json(await check('Nobody-Has-This')), { available: true });
  });

  it('answers 400 validation_failed for a name that could never be valid', async () => {
    for (const name of ['ab', 'under_score', 'x'.repeat(31), '']) {
      const res = await check(name);
      assert.equal(res.statusCode, 400, name);
      assert.equal(json(res).error.code, 'validation_failed');
    }
    const missing = await t.app.inject({
      method: 'POST',
      url: '/users/username-availability',
      headers: bob.auth,
      payload: {},
    });
    assert.equal(missing.statusCode, 400);
  });

  it('keeps the username of an account in its deletion grace window reserved', async () => {
    const carol = await createUser(t, { username: 'carol-leaving' });
    const del = await t.app.inject({ method: 'DELETE', url: '/users/me', headers: carol.auth });
    assert.equal(del.statusCode, 204);
    assert.deepEqual(json(await check('carol-leaving')), { available: false });
    const res = await patch(bob, bob.id, { username: 'carol-leaving' });
    assert.equal(res.statusCode, 409);
  });
});
