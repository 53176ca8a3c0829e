import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  pickLocale,
  preferredLanguages,
  providerNotice,
  requestLocale,
  translator,
} from '../../src/oidc/pages/i18n.js';
import { en } from '../../src/oidc/pages/i18n/en.js';
import { PROVIDER_ERROR_MESSAGES } from '../../src/oidc/signin/provider-flow.js';

describe('page language', () => {
  it('ranks ui_locales first, then Accept-Language by q (ties keep their order)', () => {
    assert.deepEqual(preferredLanguages('fr-CA de', 'es;q=0.5, pt-BR, it;q=0.9, *;q=0.1, nl;q=0'), [
      'fr-CA',
      'de',
      'pt-BR',
      'it',
      'es',
    ]);
    assert.deepEqual(preferredLanguages(undefined, undefined), []);
  });

  it('picks the first wanted language with a catalog, by exact tag then primary subtag', () => {
    const available = ['en', 'fr', 'pt-BR'];
    assert.equal(pickLocale(['de', 'fr-CA', 'pt-BR'], available), 'fr');
    assert.equal(pickLocale(['PT-br'], available), 'pt-BR');
    assert.equal(pickLocale(['de', 'ja'], available), 'en', 'English when nothing matches');
    // ui_locales outranks the browser.
    assert.equal(pickLocale(preferredLanguages('fr', 'pt-BR'), available), 'fr');
    assert.equal(requestLocale({ headers: { 'accept-language': 'de-DE,de;q=0.9' } }, 'xx'), 'en');
  });

  it('fills placeholders and leaves unknown ones visible', () => {
    const t = translator('en');
    assert.equal(t('signin.title', { app: 'Shop' }), 'Sign in to Shop');
    assert.equal(t('signin.title'), 'Sign in to {app}');
    assert.equal(translator('zz')('consent.allow'), 'Allow', 'an unknown locale falls back to English');
  });

  it('has a line for every provider failure, and none for unknown codes', () => {
    const t = translator('en');
    for (const code of Object.keys(PROVIDER_ERROR_MESSAGES))
      assert.equal(
        providerNotice(t, code),
        PROVIDER_ERROR_MESSAGES[code as keyof typeof PROVIDER_ERROR_MESSAGES],
      );
    assert.equal(providerNotice(t, 'toString'), undefined);
    assert.equal(providerNotice(t, undefined), undefined);
  });

  it('every catalog value is a non-empty string', () => {
    for (const [key, value] of Object.entries(en)) assert.ok(typeof value === 'string' && value.length, key);
  });
});
