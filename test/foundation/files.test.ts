import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sanitizeSvg } from '../../src/modules/files/files.service.js';
import { buildTestApp, createUser, json, type TestApp, type TestUser } from '../helpers/app.js';

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('0000000d49484452000000010000000108060000001f15c489', 'hex'),
]);

function multipart(filename: string, contentType: string, data: Buffer) {
  const boundary = '----gatehouse-test-boundary';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('files', () => {
  let t: TestApp;
  let user: TestUser;
  before(async () => {
    t = await buildTestApp();
    user = await createUser(t);
  });
  after(() => t.close());

  it('stores a PNG and serves it at its URL', async () => {
    const m = multipart('a.png', 'image/png', PNG);
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 201);
    const file = json(res);
    assert.equal(file.contentType, 'image/png');
    assert.equal(file.bytes, PNG.length);
    assert.match(file.id, /^file_/);
    assert.equal(file.url, `http://gatehouse.test/files/${file.fileKey}`);
    const got = await t.app.inject(`/files/${file.fileKey}`);
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers['content-type'], 'image/png');
    assert.match(got.headers['content-security-policy'] as string, /default-src 'none'/);
    assert.deepEqual(got.rawPayload, PNG);
  });

  it('judges the type by the bytes, not the claimed content type', async () => {
    const m = multipart('a.png', 'image/png', Buffer.from('#!/bin/sh\necho hi\n'));
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.code, 'validation_failed');
    assert.equal(json(res).error.details.fields[0].field, 'file');
  });

  it('refuses files over 2 MB with 413', async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024 + 10)]);
    const m = multipart('big.png', 'image/png', big);
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 413);
    assert.equal(json(res).error.code, 'payload_too_large');
  });

  it('sanitises SVG uploads', async () => {
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)"><circle r="4"/></a><foreignObject><div/></foreignObject></svg>',
    );
    const m = multipart('x.svg', 'image/svg+xml', svg);
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 201);
    const served = (await t.app.inject(`/files/${json(res).fileKey}`)).body;
    assert.ok(!/script|onload|javascript:|foreignObject/i.test(served), served);
    assert.ok(served.includes('<circle r="4"/>'));
  });

  it('removes nested script tricks', () => {
    assert.ok(!/<script/i.test(sanitizeSvg('<svg><scr<script></script>ipt>alert(1)</script></svg>')));
  });

  it('requires authentication and multipart', async () => {
    const m = multipart('a.png', 'image/png', PNG);
    assert.equal((await t.app.inject({ method: 'POST', url: '/files', ...m })).statusCode, 401);
    const res = await t.app.inject({ method: 'POST', url: '/files', headers: user.auth, payload: { a: 1 } });
    assert.equal(res.statusCode, 415);
  });

  it('answers 404 for an unknown file key', async () => {
    const res = await t.app.inject('/files/AAAAAAAAAAAAAAAAAAAAAAAA.png');
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).error.code, 'not_found');
  });
});
