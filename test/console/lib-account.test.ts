import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { previewUrl } from '../../console/src/lib/preview.js';
import {
  injectedWallet,
  safeIcon,
  shortAddress,
  standardWallet,
  toBase64,
} from '../../console/src/lib/wallets.js';
import { createTestWallet } from '../helpers/wallet.js';

describe('console: the brand preview URL', () => {
  it('carries the unsaved values, leaves out empty ones and refuses a colour that is not one', () => {
    const url = new URL(
      previewUrl({
        name: ' Acme ',
        color: 'red; background: url(x)',
        logoUrl: '',
        privacyPolicyUrl: 'https://acme.example/privacy',
        termsUrl: null,
        order: ['google', 'solana'],
      }),
      'http://x',
    );
    assert.equal(url.pathname, '/console/brand-preview');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      name: 'Acme',
      primaryColor: '#2f54eb',
      privacyPolicyUrl: 'https://acme.example/privacy',
      providerOrder: 'google,solana',
    });
  });
});

describe('console: wallets in the page', () => {
  it('keeps only data: and https: icons', () => {
    assert.equal(safeIcon('https://w.example/i.png'), 'https://w.example/i.png');
    assert.equal(safeIcon('data:image/svg+xml;base64,AAAA'), 'data:image/svg+xml;base64,AAAA');
    assert.equal(safeIcon('javascript:alert(1)'), null);
    assert.equal(safeIcon(42), null);
  });

  it('a Wallet Standard wallet needs a Solana chain and solana:signMessage', () => {
    const features = { 'solana:signMessage': { signMessage: async () => [] } };
    assert.equal(standardWallet({ name: 'Eth', chains: ['eip155:1'], features }), null);
    assert.equal(standardWallet({ name: 'NoSign', chains: ['solana:mainnet'], features: {} }), null);
    assert.equal(standardWallet({ name: 'Ok', chains: ['solana:mainnet'], features })?.name, 'Ok');
  });

  it('signs with the account it connected, through either kind of wallet', async () => {
    const w = createTestWallet();
    const account = { address: w.address, chains: ['solana:mainnet'] };
    const standard = standardWallet({
      name: 'S',
      chains: ['solana:mainnet'],
      accounts: [],
      features: {
        'standard:connect': { connect: async () => ({ accounts: [account] }) },
        'solana:signMessage': {
          signMessage: async ({ message }: { message: Uint8Array }) => [
            { signature: new Uint8Array(w.signBytes(message)) },
          ],
        },
      },
    })!;
    const injected = injectedWallet('P', {
      publicKey: { toBase58: () => w.address },
      signMessage: async (bytes: Uint8Array) => ({ signature: new Uint8Array(w.signBytes(bytes)) }),
    });
    for (const entry of [standard, injected]) {
      const c = await entry.connect();
      assert.equal(c.address, w.address);
      const sig = await c.signMessage(new TextEncoder().encode('hello'));
      assert.equal(toBase64(sig), w.signBytes('hello').toString('base64'));
    }
  });

  it('shortens an address to its ends', () => {
    assert.equal(shortAddress('ABCDEFGHIJKLMNOP'), 'ABCD…MNOP');
    assert.equal(shortAddress('short'), 'short');
  });
});
