/**
 * The Solana wallets in the page, the way the hosted sign-in finds them (src/oidc/pages/assets/signin.js):
 * Wallet Standard wallets that register themselves, and the injected providers (Phantom, Solflare,
 * Backpack, `window.solana`). Each can connect and sign a message's bytes.
 */

export interface PageWallet {
  name: string;
  icon: string | null;
  connect(): Promise<ConnectedWallet>;
}

export interface ConnectedWallet {
  address: string;
  signMessage(bytes: Uint8Array): Promise<Uint8Array>;
}

// biome-ignore lint/suspicious/noExplicitAny: wallet objects come from extensions, untyped
type Loose = any;

/** Only data: and https: icons (an extension's icon is not trusted markup). */
export function safeIcon(icon: unknown): string | null {
  return typeof icon === 'string' && /^(data:image\/(png|svg\+xml|webp|jpeg|gif);|https:)/.test(icon)
    ? icon
    : null;
}

/** A Wallet Standard wallet with a Solana chain and `solana:signMessage`, else null. */
export function standardWallet(w: Loose): PageWallet | null {
  const f = w?.features ?? {};
  const solana = (w?.chains ?? []).some((c: unknown) => String(c).startsWith('solana:'));
  if (!solana || !f['solana:signMessage']) return null;
  return {
    name: String(w.name || 'Wallet'),
    icon: safeIcon(w.icon),
    async connect() {
      let accounts = w.accounts ?? [];
      if (!accounts.length && f['standard:connect'])
        accounts = (await f['standard:connect'].connect()).accounts;
      const account =
        accounts.find((a: Loose) => (a.chains ?? []).some((c: unknown) => String(c).startsWith('solana:'))) ??
        accounts[0];
      if (!account) throw new Error('The wallet has no Solana account.');
      return {
        address: String(account.address),
        async signMessage(bytes) {
          const [out] = await f['solana:signMessage'].signMessage({ account, message: bytes });
          return new Uint8Array(out.signature);
        },
      };
    },
  };
}

/** An injected provider (`connect()`, `publicKey`, `signMessage(bytes)`). */
export function injectedWallet(name: string, p: Loose): PageWallet {
  return {
    name,
    icon: safeIcon(p.icon),
    async connect() {
      if (!p.publicKey && typeof p.connect === 'function') await p.connect();
      if (!p.publicKey) throw new Error('The wallet did not share an account.');
      const address =
        typeof p.publicKey.toBase58 === 'function' ? p.publicKey.toBase58() : String(p.publicKey);
      return {
        address,
        async signMessage(bytes) {
          const r = await p.signMessage(bytes, 'utf8');
          return new Uint8Array(r?.signature ? r.signature : r);
        },
      };
    },
  };
}

const registered = new Set<Loose>();
const listeners = new Set<() => void>();
let listening = false;

function listen(): void {
  if (listening || typeof window === 'undefined') return;
  listening = true;
  const register = (...list: Loose[]) => {
    for (const w of list) registered.add(w);
    for (const l of listeners) l();
    return () => {
      for (const w of list) registered.delete(w);
      for (const l of listeners) l();
    };
  };
  window.addEventListener('wallet-standard:register-wallet', (e: Event) => {
    try {
      (e as CustomEvent).detail({ register });
    } catch {
      /* a wallet's own failure */
    }
  });
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: { register } }));
}

/** Every wallet in the page now; `onChange` hears of Wallet Standard wallets that register later. */
export function pageWallets(onChange?: () => void): { wallets: PageWallet[]; stop: () => void } {
  listen();
  if (onChange) listeners.add(onChange);
  const w = window as Loose;
  const out: PageWallet[] = [];
  for (const s of registered) {
    const entry = standardWallet(s);
    if (entry) out.push(entry);
  }
  const seen = new Set<unknown>();
  const add = (name: string, p: Loose) => {
    if (p && typeof p.signMessage === 'function' && !seen.has(p)) {
      seen.add(p);
      out.push(injectedWallet(name, p));
    }
  };
  add('Phantom', w.phantom?.solana);
  add('Solflare', w.solflare);
  add('Backpack', w.backpack);
  const s = w.solana;
  if (s)
    add(s.isPhantom ? 'Phantom' : s.isSolflare ? 'Solflare' : s.isBackpack ? 'Backpack' : 'Solana wallet', s);
  return { wallets: out, stop: () => onChange && listeners.delete(onChange) };
}

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** The proof the wallet routes take: the challenge's exact bytes and the signature, both base64. */
export async function signChallenge(wallet: ConnectedWallet, message: string) {
  const bytes = new TextEncoder().encode(message);
  const signature = await wallet.signMessage(bytes);
  return { signature: toBase64(signature), signedMessage: toBase64(bytes) };
}

/** `AbCd…WxYz`: enough of an address to tell wallets apart. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}
