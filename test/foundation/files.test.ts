import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JSDOM } from 'jsdom';
import { sanitizeSvg } from '../../src/modules/files/svg-sanitizer.js';
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
    assert.ok(served.includes('<circle r="4">'), served);
  });

  it('removes nested script tricks', async () => {
    assert.ok(
      !/<script/i.test((await sanitizeSvg('<svg><scr<script></script>ipt>alert(1)</script></svg>')) ?? ''),
    );
  });

  // Issue 14 finding 13 (the first two) and the classic SVG payloads: each must leave no active
  // content and no reference outside the image, and the result must still parse as SVG.
  const NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"';
  const hostile: Record<string, string> = {
    'entity-encoded javascript: in xlink:href': `<svg ${NS}><a xlink:href="jav&#x61;script:alert(1)"><rect width="5" height="5"/></a></svg>`,
    'animate rewriting href': `<svg ${NS}><a><animate attributeName="href" values="javascript:alert(1)"/><set attributeName="href" to="javascript:alert(1)"/><rect width="5" height="5"/></a></svg>`,
    script: `<svg ${NS}><script>alert(1)</script><script xlink:href="https://evil.test/x.js"/><rect width="5" height="5"/></svg>`,
    'event handlers': `<svg ${NS} onload="alert(1)"><rect width="5" height="5" onclick="alert(1)" onmouseover='alert(1)'/></svg>`,
    foreignObject: `<svg ${NS}><foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/><iframe src="javascript:alert(1)"/></body></foreignObject><rect width="5" height="5"/></svg>`,
    'external href': `<svg ${NS}><a href="https://evil.test/"><rect width="5" height="5"/></a><image href="https://evil.test/pixel.png"/><image xlink:href="//evil.test/p.png"/></svg>`,
    'data: URIs': `<svg ${NS}><image href="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"/><a xlink:href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"><rect width="5" height="5"/></a></svg>`,
    'use of an external document': `<svg ${NS}><use href="https://evil.test/sprite.svg#x"/><use xlink:href="data:image/svg+xml,&lt;svg id='x'/&gt;#x"/><rect width="5" height="5"/></svg>`,
    'CSS url() and @import': `<svg ${NS}><style>@import url(https://evil.test/x.css); rect { fill: url(https://evil.test/p) }</style><style>rect { fill: u\\72l(https://evil.test/p) }</style><rect width="5" height="5" style="fill:url('https://evil.test/p')" fill="url(https://evil.test/p#g)" filter="url(//evil.test/f#x)"/></svg>`,
    'CSS image-set() and quoted URLs': `<svg ${NS}><style>rect{background:image-set("https://evil.test/b" 1x)} circle{fill:-webkit-image-set('//evil.test/c' 1x)}</style><rect width="5" height="5" style="background-image:image-set('https://evil.test/a.png' 1x)"/><circle r="2" style="cursor:cross-fade('https://evil.test/x')"/></svg>`,
    'entities in a DOCTYPE': `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "jav&#x61;script:alert(1)"><!ENTITY b "&a;&a;&a;&a;&a;">]><svg ${NS}><a href="&a;"><text>&b;</text></a></svg>`,
    'mixed-case and whitespace tricks': `<svg ${NS}><a HREF=" javascript:alert(1)"><rect width="5" height="5"/></a><a xlink:href="&#10;java&#9;script:alert(1)"><circle r="2"/></a><SCRIPT>alert(1)</SCRIPT></svg>`,
  };
  for (const [name, payload] of Object.entries(hostile)) {
    it(`sanitises an SVG with ${name}`, async () => {
      const out = await sanitizeSvg(payload);
      assert.ok(out !== null, 'the image itself is kept');
      assert.ok(
        !/script|\bon[a-z]+\s*=|<animate|<set|foreignObject|iframe|@import|evil\.test|data:/i.test(out),
        out,
      );
      assert.ok(!/href="(?!#)/i.test(out), out);
      assert.ok(!/url\((?!#)/i.test(out), out);
      // Still an SVG document a browser parses as XML (the content type it is served with).
      const doc = new JSDOM(out, { contentType: 'image/svg+xml' }).window.document;
      assert.equal(doc.documentElement.localName, 'svg');
    });
  }

  it('gives an SVG without a namespace the SVG namespace, so it renders as image/svg+xml', async () => {
    const out = (await sanitizeSvg('<svg viewBox="0 0 4 4"><rect width="4" height="4"/></svg>')) ?? '';
    const doc = new JSDOM(out, { contentType: 'image/svg+xml' }).window.document;
    assert.equal(doc.documentElement.namespaceURI, 'http://www.w3.org/2000/svg');
  });

  it('keeps what an icon needs: shapes, gradients, local references, viewBox, text', async () => {
    const icon = `<?xml version="1.0" encoding="UTF-8"?>
<svg ${NS} viewBox="0 0 24 24" width="24" height="24"><defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/></linearGradient><path id="p" d="M0 0h24v24H0z"/></defs><style>.a { fill: url(#g) }</style><g class="a"><use xlink:href="#p"/><use href="#p" fill="url(#g)"/></g><text x="1" y="20">A&#160;B</text></svg>`;
    const out = (await sanitizeSvg(icon)) ?? '';
    for (const kept of [
      'viewBox="0 0 24 24"',
      '<linearGradient id="g">',
      'xlink:href="#p"',
      'href="#p"',
      'fill="url(#g)"',
      '.a { fill: url(#g) }',
      '<path id="p" d="M0 0h24v24H0z">',
    ])
      assert.ok(out.includes(kept), `${kept} in ${out}`);
    const doc = new JSDOM(out, { contentType: 'image/svg+xml' }).window.document;
    assert.equal(doc.querySelector('text')?.textContent, 'A\u00a0B');
  });

  it('serves an uploaded SVG with the review payloads neutralised', async () => {
    const m = multipart(
      'x.svg',
      'image/svg+xml',
      Buffer.from(hostile['entity-encoded javascript: in xlink:href'] as string),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 201);
    const served = (await t.app.inject(`/files/${json(res).fileKey}`)).body;
    assert.ok(!/script|&#x61;|xlink:href="(?!#)/i.test(served), served);
    assert.ok(served.includes('<rect'), served);
  });

  it('refuses an SVG that has no image left once active content is removed', async () => {
    const m = multipart(
      'x.svg',
      'image/svg+xml',
      Buffer.from('<svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(1)</svg:script><!-- <svg -->'),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...user.auth },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).error.details.fields[0].field, 'file');
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

describe('files: the daily storage budgets', () => {
  let t: TestApp;
  before(async () => {
    // Every limit at a fifth, so the test stores less: 4 MiB a user, 10 MiB a source, 6 uploads a minute.
    t = await buildTestApp({ env: { RATE_LIMIT_MULTIPLIER: '0.2' } });
  });
  after(() => t.close());

  // 800,000 bytes a file: 5 fit in a user's 4 MiB, 13 in a network source's 10 MiB.
  const image = Buffer.concat([PNG, Buffer.alloc(800_000 - PNG.length)]);
  const upload = (u: TestUser, remoteAddress: string, data = image) => {
    const m = multipart('a.png', 'image/png', data);
    return t.app.inject({
      method: 'POST',
      url: '/files',
      ...m,
      headers: { ...m.headers, ...u.auth },
      remoteAddress,
    });
  };
  const files = async () =>
    Number(
      (
        await t.ctx.db
          .selectFrom('files')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses a user past 20 MiB a day with 429 and stores nothing', async () => {
    const u = await createUser(t);
    for (let i = 0; i < 5; i++) {
      const ok = await upload(u, '198.51.100.1');
      assert.equal(ok.statusCode, 201);
      assert.equal(ok.headers['ratelimit-limit'], '6', 'the headers count uploads, not bytes');
    }
    const before = await files();
    // Another address does not reset the user's budget.
    const refused = await upload(u, '198.51.100.2');
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(json(refused).error.code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(json(refused).error.details.limit, 4 * 1024 * 1024);
    assert.equal(await files(), before);
  });

  /** Fills `source`'s 10 MiB with 13 files from three accounts (5 each fit in a user's 4 MiB). */
  const fillSource = async (source: string) => {
    let stored = 0;
    for (let n = 0; n < 3; n++) {
      const u = await createUser(t);
      for (let i = 0; i < 5 && stored < 13; i++, stored++)
        assert.equal((await upload(u, source)).statusCode, 201);
    }
  };

  it('refuses a network source past 50 MiB a day, whatever account it uses', async () => {
    const source = '203.0.113.7';
    await fillSource(source);
    const fresh = await createUser(t);
    assert.equal((await upload(fresh, source)).statusCode, 429);
    assert.equal((await upload(fresh, '203.0.113.8')).statusCode, 201, 'another source still may');
  });

  it('spends nothing on an upload it refuses', async () => {
    const u = await createUser(t);
    // 4.5 MB that is no image: refused with 400, so the user's 4 MiB is still whole.
    const junk = Buffer.alloc(1_500_000, 7);
    for (let i = 0; i < 3; i++) assert.equal((await upload(u, '198.51.100.20', junk)).statusCode, 400);
    assert.equal((await upload(u, '198.51.100.20')).statusCode, 201);
  });

  it("a source's refusal spends none of the user's budget", async () => {
    const source = '203.0.113.30';
    await fillSource(source);
    const victim = await createUser(t);
    assert.equal((await upload(victim, source)).statusCode, 429);
    // All of the victim's 4 MiB is left for another network: five files of 800,000 bytes.
    for (let i = 0; i < 5; i++)
      assert.equal((await upload(victim, '203.0.113.31')).statusCode, 201, `upload ${i + 1}`);
  });

  // Sanitising escapes each `"` in an attribute as `&quot;`: six bytes stored for one sent.
  const quotedSvg = (quotes: number) =>
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><text class='${'"'.repeat(quotes)}'>x</text></svg>`);

  it('spends what would be stored: a sanitised SVG by its size after sanitising', async () => {
    const u = await createUser(t);
    const svg = quotedSvg(320_000); // 320 KB sent, ~1.92 MB stored
    const first = await upload(u, '198.51.100.40', svg);
    assert.equal(first.statusCode, 201, first.body);
    assert.ok(json(first).bytes > 1_900_000, 'stored larger than sent');
    assert.equal((await upload(u, '198.51.100.40', svg)).statusCode, 201);
    const third = await upload(u, '198.51.100.40', svg);
    assert.equal(third.statusCode, 429, 'two stored files spent 3.84 of the 4 MiB');
  });

  it('refuses with 413 an SVG that sanitising grows past 2 MB, and stores nothing', async () => {
    const u = await createUser(t);
    const before = await files();
    const res = await upload(u, '198.51.100.50', quotedSvg(400_000)); // 400 KB sent, 2.4 MB clean
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(json(res).error.code, 'payload_too_large');
    assert.equal(await files(), before);
  });
});
