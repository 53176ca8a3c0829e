import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APP_TYPE_DEFAULTS, openidClientSnippet, parseUriList } from '../../console/src/lib/app-types.js';
import { allPermissions, groupPermissions, permissionsOf } from '../../console/src/lib/permissions.js';
import { fieldKey, missingReason, toProblem } from '../../console/src/lib/problems.js';
import { fullOrder, move, previewColor, SIGN_IN_METHODS } from '../../console/src/lib/providers.js';
import { safeReturnTo } from '../../console/src/lib/returnto.js';
import { scopeNameProblem, slugFromName, slugProblem } from '../../console/src/lib/slug.js';

// The console's browser logic that lives in pure modules, tested without a browser.

describe('console: where sign-in returns to', () => {
  it('keeps console paths with their query and fragment', () => {
    assert.equal(safeReturnTo('/console/orgs/acme/brands?x=1#y'), '/console/orgs/acme/brands?x=1#y');
    assert.equal(
      safeReturnTo('/console/invitations/accept#token=ghinv_abc'),
      '/console/invitations/accept#token=ghinv_abc',
    );
    assert.equal(safeReturnTo('/console'), '/console');
  });
  it('never leaves the console: other paths, other origins, the callback itself', () => {
    for (const bad of [
      null,
      '',
      'https://evil.example/console/',
      '//evil.example/console/',
      '/consolex/../admin',
      '/admin',
      '/console/callback?code=x',
      '/console/\\evil',
      '/console/ x',
    ])
      assert.equal(safeReturnTo(bad), '/console/', String(bad));
  });
});

describe('console: slugs and scope names as you type', () => {
  it('suggests a slug from a name', () => {
    assert.equal(slugFromName('Acme Corp'), 'acme-corp');
    assert.equal(slugFromName('  Café — Ünïcode!! '), 'cafe-unicode');
    assert.equal(slugFromName('x'.repeat(40)), 'x'.repeat(30));
    assert.equal(slugFromName('a'.repeat(29) + ' b'), 'a'.repeat(29));
  });
  it('says what is wrong with a slug, or nothing', () => {
    assert.equal(slugProblem('acme-corp'), null);
    assert.equal(slugProblem(''), 'Enter a slug.');
    assert.equal(slugProblem('ab'), 'At least 3 characters.');
    assert.equal(slugProblem('a'.repeat(31)), 'At most 30 characters.');
    assert.equal(slugProblem('Acme'), 'Only lower-case letters, digits and dashes.');
  });
  it('checks scope names against [a-z0-9:_-]{2,80}', () => {
    assert.equal(scopeNameProblem('orders:read'), null);
    assert.equal(scopeNameProblem('a'), 'At least 2 characters.');
    assert.match(scopeNameProblem('Orders')!, /lower-case/);
    assert.equal(scopeNameProblem('x'.repeat(81)), 'At most 80 characters.');
  });
});

describe('console: API errors shown where they belong', () => {
  it('maps details.fields to form fields, whatever the path form', () => {
    assert.equal(fieldKey('name'), 'name');
    assert.equal(fieldKey('/redirectUris/0'), 'redirectUris');
    assert.equal(fieldKey('body.slug'), 'slug');
    assert.equal(fieldKey('config/clientId'), 'clientId');
    const p = toProblem(400, {
      error: {
        code: 'validation_failed',
        message: 'request validation failed',
        details: {
          fields: [
            { field: '/redirectUris/0', code: 'format', message: 'must be an HTTPS URL' },
            { field: '/redirectUris/1', code: 'format', message: 'second message' },
          ],
        },
      },
    });
    assert.deepEqual(p.fields, { redirectUris: 'must be an HTTPS URL' });
    assert.equal(p.code, 'validation_failed');
  });
  it('keeps the missing permissions of a 403 and says them', () => {
    const p = toProblem(403, {
      error: { code: 'forbidden', message: 'missing permission', details: { missing: ['org.edit'] } },
    });
    assert.deepEqual(p.missing, ['org.edit']);
    assert.equal(missingReason(p.missing), 'Needs the permission org.edit.');
    assert.deepEqual(
      toProblem(403, { error: { code: 'forbidden', details: { missing: 'org.delete' } } }).missing,
      ['org.delete'],
    );
  });
  it('a network failure or a body that is no envelope still gives a message', () => {
    assert.equal(toProblem(0, null).message, 'The service could not be reached.');
    assert.equal(toProblem(502, '<html>').message, 'The request failed (HTTP 502).');
  });
});

describe('console: permissions from the role data', () => {
  const roles = [
    {
      id: 'r1',
      name: 'Owner',
      isBuiltIn: true,
      permissions: [
        'org.read',
        'org.edit',
        'org.delete',
        'org.members.view',
        'org.members.edit',
        'org.tokenGates.view',
      ],
    },
    {
      id: 'r2',
      name: 'Member',
      isBuiltIn: true,
      permissions: ['org.read', 'org.members.view', 'org.tokenGates.view'],
    },
  ];
  it("a member holds the union of their roles' permissions, and org.read", () => {
    assert.deepEqual([...permissionsOf(['r2'], roles)].sort(), [
      'org.members.view',
      'org.read',
      'org.tokenGates.view',
    ]);
    assert.deepEqual([...permissionsOf([], roles)], ['org.read']);
  });
  it('groups every permission by resource, org first', () => {
    assert.deepEqual(groupPermissions(allPermissions(roles)), [
      { resource: 'org', permissions: ['org.delete', 'org.edit', 'org.read'] },
      { resource: 'members', permissions: ['org.members.edit', 'org.members.view'] },
      { resource: 'tokenGates', permissions: ['org.tokenGates.view'] },
    ]);
  });
});

describe('console: the brand editor', () => {
  it('lists every sign-in method, the brand order first', () => {
    const order = fullOrder(['google', 'solana', 'bogus']);
    assert.deepEqual(order.slice(0, 2), ['google', 'solana']);
    assert.equal(order.length, SIGN_IN_METHODS.length);
    assert.ok(!(order as string[]).includes('bogus'));
  });
  it('moves an item (drag and drop, or the buttons), ignoring moves out of range', () => {
    assert.deepEqual(move(['a', 'b', 'c'], 2, 0), ['c', 'a', 'b']);
    assert.deepEqual(move(['a', 'b', 'c'], 0, 1), ['b', 'a', 'c']);
    const same = ['a', 'b'];
    assert.equal(move(same, 0, 5), same);
    assert.equal(move(same, -1, 0), same);
  });
  it('previews the colour the hosted page would use', () => {
    assert.equal(previewColor('#aa3300'), '#aa3300');
    assert.equal(previewColor('#abc'), '#abc');
    assert.equal(previewColor('red; background: url(x)'), '#2f54eb');
    assert.equal(previewColor(null), '#2f54eb');
  });
});

describe('console: the app forms', () => {
  it('has defaults per type: confidential web and m2m, public spa, native and agent', () => {
    assert.equal(APP_TYPE_DEFAULTS.web.isConfidential, true);
    assert.equal(APP_TYPE_DEFAULTS.m2m.isConfidential, true);
    assert.deepEqual(APP_TYPE_DEFAULTS.m2m.grants, ['client_credentials']);
    for (const t of ['spa', 'native', 'agent'] as const)
      assert.equal(APP_TYPE_DEFAULTS[t].isConfidential, false);
    assert.ok(APP_TYPE_DEFAULTS.agent.grants.includes('urn:ietf:params:oauth:grant-type:device_code'));
  });
  it('reads one redirect URI per line', () => {
    assert.deepEqual(parseUriList(' https://a/cb \n\nhttps://b/cb\r\nhttps://a/cb\n'), [
      'https://a/cb',
      'https://b/cb',
    ]);
  });
  it('writes an openid-client snippet for the app, the secret only from the environment', () => {
    const s = openidClientSnippet({
      issuer: 'https://id.example',
      clientId: 'abc',
      isConfidential: true,
      redirectUri: 'https://app/cb',
      scopes: ['openid', 'email'],
    });
    assert.match(
      s,
      /client\.discovery\(\s*new URL\('https:\/\/id\.example'\),\s*'abc',\s*process\.env\.GATEHOUSE_CLIENT_SECRET/,
    );
    assert.match(s, /scope: 'openid email'/);
    assert.match(s, /redirect_uri: 'https:\/\/app\/cb'/);
    assert.doesNotMatch(
      openidClientSnippet({ issuer: 'x', clientId: 'abc', isConfidential: false, scopes: [] }),
      /SECRET/,
    );
  });
});
