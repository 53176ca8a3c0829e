// The hosted sign-in page's browser side. It lists every Solana wallet the browser offers (Wallet
// Standard wallets and injected providers), signs the service's challenge with the one the person
// picks (`solana:signIn` when the wallet has it, else `signMessage`), and drives the headless
// interaction API: challenge, verify, consent. No framework, no outside code.
(() => {
  const data = JSON.parse(document.getElementById('gh-data').textContent);
  const $ = (id) => document.getElementById(id);
  const say = (key, vars) =>
    (data.strings[key] || key).replace(/\{(\w+)\}/g, (m, name) => (vars && name in vars ? vars[name] : m));
  const statusEl = $('status');
  const status = (message, isError) => {
    statusEl.textContent = message;
    statusEl.className = isError ? 'status error' : 'status';
  };

  class Problem extends Error {}
  const api = async (path, body) => {
    let res;
    try {
      res = await fetch(`/interactions/${encodeURIComponent(data.id)}${path}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
    } catch {
      throw new Problem(say('error.network'));
    }
    const json = await res.json().catch(() => ({}));
    if (res.ok) return json;
    const code = json.error?.code;
    if (res.status === 404) throw new Problem(say('error.expired', { app: data.app }));
    if (res.status === 429) throw new Problem(say('error.tooMany'));
    if (code === 'stale_challenge' || code === 'replayed_nonce') throw new Problem(say('error.tooSlow'));
    if (code === 'bad_signature' || code === 'wrong_brand') throw new Problem(say('error.signatureInvalid'));
    // The app's wallet requirement cannot be read now (503): the sign-in is kept, try again later.
    if (code === 'temporarily_unavailable') throw new Problem(say('error.requirementUnavailable'));
    throw new Problem(say('error.generic'));
  };

  const b64 = (bytes) => {
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s);
  };
  const sameBytes = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

  /** The DESIGN §3 message as `solana:signIn` input: the wallet rebuilds the same text from it. */
  const signInInput = (message) => {
    const lines = message.split('\n');
    const field = (name) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
    const at = lines.indexOf('Resources:');
    return {
      domain: lines[0].replace(/ wants you to sign in with your Solana account:$/, ''),
      address: lines[1],
      statement: lines[3],
      uri: field('URI'),
      version: field('Version'),
      chainId: field('Chain ID'),
      nonce: field('Nonce'),
      issuedAt: field('Issued At'),
      expirationTime: field('Expiration Time'),
      resources: at >= 0 ? lines.slice(at + 1).map((l) => l.replace(/^- /, '')) : undefined,
    };
  };

  const rejected = (err) =>
    err && (err.code === 4001 || /reject|denied|declin|cancel|closed/i.test(`${err.name} ${err.message}`));

  // ---- Wallet discovery ----
  const wallets = [];
  const listEl = $('wallet-list');
  let searching = true;
  let busy = false;
  const safeIcon = (icon) =>
    typeof icon === 'string' && /^(data:image\/(png|svg\+xml|webp|jpeg|gif);|https:)/.test(icon)
      ? icon
      : null;

  function standardEntry(w) {
    const f = w.features || {};
    const solana = (w.chains || []).some((c) => String(c).startsWith('solana:'));
    if (!solana || !(f['solana:signIn'] || f['solana:signMessage'])) return null;
    return {
      name: String(w.name || 'Wallet'),
      icon: safeIcon(w.icon),
      async connect() {
        let accounts = w.accounts || [];
        if (!accounts.length && f['standard:connect'])
          accounts = (await f['standard:connect'].connect()).accounts;
        const account =
          accounts.find((a) => (a.chains || []).some((c) => String(c).startsWith('solana:'))) || accounts[0];
        if (!account) throw new Problem(say('error.walletNoAccount'));
        return {
          address: account.address,
          signIn: f['solana:signIn']
            ? async (message) => {
                const [out] = await f['solana:signIn'].signIn(signInInput(message));
                return {
                  signedMessage: new Uint8Array(out.signedMessage),
                  signature: new Uint8Array(out.signature),
                };
              }
            : null,
          signMessage: f['solana:signMessage']
            ? async (bytes) =>
                new Uint8Array(
                  (await f['solana:signMessage'].signMessage({ account, message: bytes }))[0].signature,
                )
            : null,
        };
      },
    };
  }

  function injectedEntry(name, p) {
    return {
      name,
      icon: safeIcon(p.icon),
      async connect() {
        if (!p.publicKey && typeof p.connect === 'function') await p.connect();
        if (!p.publicKey) throw new Problem(say('error.walletNoAccount'));
        const address =
          typeof p.publicKey.toBase58 === 'function' ? p.publicKey.toBase58() : String(p.publicKey);
        return {
          address,
          signIn: null,
          signMessage: async (bytes) => {
            const r = await p.signMessage(bytes, 'utf8');
            return new Uint8Array(r?.signature ? r.signature : r);
          },
        };
      },
    };
  }

  const standard = new Set();
  const register = (...list) => {
    for (const w of list) standard.add(w);
    render();
    return () => {
      for (const w of list) standard.delete(w);
      render();
    };
  };
  window.addEventListener('wallet-standard:register-wallet', (e) => {
    try {
      e.detail({ register });
    } catch {}
  });
  try {
    window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: { register } }));
  } catch {}

  function injected() {
    const out = [];
    const seen = new Set();
    const add = (name, p) => {
      if (p && typeof p.signMessage === 'function' && !seen.has(p)) {
        seen.add(p);
        out.push(injectedEntry(name, p));
      }
    };
    add('Phantom', window.phantom?.solana);
    add('Solflare', window.solflare);
    add('Backpack', window.backpack);
    const s = window.solana;
    if (s)
      add(
        s.isPhantom ? 'Phantom' : s.isSolflare ? 'Solflare' : s.isBackpack ? 'Backpack' : 'Solana wallet',
        s,
      );
    return out;
  }

  function collect() {
    const list = [];
    for (const w of standard) {
      const entry = standardEntry(w);
      if (entry && !list.some((x) => x.name === entry.name)) list.push(entry);
    }
    for (const entry of injected()) if (!list.some((x) => x.name === entry.name)) list.push(entry);
    return list;
  }

  function render() {
    if (!listEl) return;
    wallets.splice(0, wallets.length, ...collect());
    listEl.replaceChildren(
      ...wallets.map((w) => {
        const li = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'secondary wallet-button';
        button.disabled = busy;
        if (w.icon) {
          const img = document.createElement('img');
          img.src = w.icon;
          img.alt = '';
          button.append(img);
        } else {
          const mono = document.createElement('span');
          mono.className = 'wallet-mono';
          mono.setAttribute('aria-hidden', 'true');
          mono.textContent = w.name.slice(0, 1).toUpperCase();
          button.append(mono);
        }
        const label = document.createElement('span');
        label.className = 'label';
        label.textContent = say('signin.walletButton', { wallet: w.name });
        const tag = document.createElement('span');
        tag.className = 'tag';
        tag.setAttribute('aria-hidden', 'true');
        tag.textContent = say('signin.walletDetected');
        button.append(label, tag);
        button.addEventListener('click', () => run(() => signIn(w)));
        li.append(button);
        return li;
      }),
    );
    $('wallet-searching').hidden = !searching || wallets.length > 0;
    $('wallet-none').hidden = searching || wallets.length > 0;
  }

  function setBusy(value) {
    busy = value;
    for (const b of document.querySelectorAll('main button')) b.disabled = value;
    document.querySelector('main').setAttribute('aria-busy', String(value));
  }

  async function run(task) {
    if (busy) return;
    setBusy(true);
    try {
      await task();
    } catch (err) {
      setBusy(false);
      if (err instanceof Problem) status(err.message, true);
      else if (rejected(err)) status(say('error.walletRejected'), true);
      else status(say('error.generic'), true);
    }
  }

  async function signIn(w) {
    status(say('status.connecting', { wallet: w.name }));
    const session = await w.connect();
    const challenge = await api('/wallet/challenge', { address: session.address });
    status(say('status.approve', { wallet: w.name }));
    const message = new TextEncoder().encode(challenge.message);
    let signed = null;
    if (session.signIn) {
      const out = await session.signIn(challenge.message);
      if (sameBytes(out.signedMessage, message)) signed = out.signature;
    }
    if (!signed && session.signMessage) signed = await session.signMessage(message);
    if (!signed) throw new Problem(say('error.walletUnsupported', { wallet: w.name }));
    status(say('status.checking'));
    const result = await api('/wallet/verify', {
      address: session.address,
      signature: b64(signed),
      signedMessage: b64(message),
    });
    if (result.step === 'consent') {
      // The consent view is rendered by the server, which knows who signed in.
      window.location.assign(`/signin/${encodeURIComponent(data.id)}`);
      return;
    }
    status(say('status.redirecting', { app: data.app }));
    window.location.assign(result.redirectTo);
  }

  async function decide(decision) {
    const result = await api('/consent', { decision });
    status(say('status.leaving', { app: data.app }));
    window.location.assign(result.redirectTo);
  }

  $('consent-allow')?.addEventListener('click', () => run(() => decide('allow')));
  $('consent-deny')?.addEventListener('click', () => run(() => decide('deny')));
  $('switch-account')?.addEventListener('click', () => {
    $('consent-view').hidden = true;
    $('signin-view').hidden = false;
    status('');
    $('signin-heading').focus();
  });
  // The server sends these disabled: they work from now on.
  for (const id of ['consent-allow', 'consent-deny', 'switch-account']) if ($(id)) $(id).disabled = false;

  render();
  // Extensions may register a moment after the page loads: wait briefly before saying none.
  setTimeout(() => {
    searching = false;
    render();
  }, 800);
})();
