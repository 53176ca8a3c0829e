import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contrast, inkOn, parseHex, textOn, toHex } from '../../src/oidc/pages/color.js';
import { themeVariables } from '../../src/oidc/pages/html.js';

/** Every colour on a 16-step grid of the RGB cube (4,096 brand colours). */
function* grid(): Generator<string> {
  for (let r = 0; r < 256; r += 17)
    for (let g = 0; g < 256; g += 17) for (let b = 0; b < 256; b += 17) yield toHex([r, g, b]);
}

describe('brand colour arithmetic', () => {
  it('matches WCAG’s reference values', () => {
    assert.equal(Math.round(contrast(parseHex('#000'), parseHex('#fff')) * 100) / 100, 21);
    assert.equal(Math.round(contrast(parseHex('#777777'), parseHex('#ffffff')) * 100) / 100, 4.48);
    assert.deepEqual(parseHex('#fde047'), [253, 224, 71]);
    assert.equal(textOn('#fde047'), '#000000', 'yellow takes black text (white was 1.2:1)');
    assert.equal(textOn('#1e1b4b'), '#ffffff');
  });

  it('text on any brand colour reaches 4.5:1', () => {
    for (const c of grid()) assert.ok(contrast(parseHex(textOn(c)), parseHex(c)) >= 4.5, c);
  });

  it('the brand as text reaches 4.5:1 on the light and the dark card, staying the brand when it can', () => {
    for (const c of grid()) {
      for (const card of ['#ffffff', '#161b22']) {
        const ink = inkOn(c, card);
        assert.ok(contrast(parseHex(ink), parseHex(card)) >= 4.5, `${c} on ${card} → ${ink}`);
        if (contrast(parseHex(c), parseHex(card)) >= 4.5) assert.equal(ink, c);
      }
    }
  });

  it('theme variables for a page', () => {
    const vars = themeVariables('#1e1b4b');
    assert.match(
      vars,
      /--brand: #1e1b4b; --on-brand: #ffffff; --brand-dark: #[0-9a-f]{6}; --on-brand-dark: #/,
    );
    const dark = vars.match(/--brand-dark: (#[0-9a-f]{6})/)![1];
    assert.ok(contrast(parseHex(dark), parseHex('#161b22')) >= 3, 'stands out on the dark card');
    assert.match(
      themeVariables('not a colour; } body { x'),
      /^--brand: #2f54eb;/,
      'only hex colours reach CSS',
    );
  });
});
